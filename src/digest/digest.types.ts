import type { AccountStatus } from '../account-state/account-state';
import type { Provider } from '../vocabulary/vocabulary';
import type { Sql } from '../database/db';
import type { AccountActivityRow, DeadJobRow } from '../jobs/job.types';
import type { DigestWindow } from './digest-schedule';

/** An account as the digest sees it (never its credentials). */
export interface DigestAccount {
  id: string;
  name: string;
  provider: Provider;
  status: AccountStatus;
  statusReason: string | null;
  /** Things to act on even while it publishes (a token that expires soon and cannot be refreshed). */
  warnings: string[];
  circuitOpenedAt: Date | null;
  consecutiveFailures: number;
  lastError: string | null;
}

/** One account's delivery in the window, as the jobs' report reads it. */
export type AccountActivity = AccountActivityRow;

/** A job that died in the window and is still dead, as the jobs' report reads it. */
export type DeadJobItem = DeadJobRow;

export interface ErrorGroup {
  message: string;
  count: number;
}

/** Everything a digest says, read from the database for one workspace and window. */
export interface DigestFacts {
  window: DigestWindow;
  accounts: DigestAccount[];
  activity: AccountActivity[];
  /** Newest first, at most DIGEST_ITEM_LIMIT. */
  deadJobs: DeadJobItem[];
  /** Every job that died in the window and is still dead (deadJobs may list fewer). */
  deadTotal: number;
  topErrors: ErrorGroup[];
}

export interface RenderedMail {
  subject: string;
  html: string;
  text: string;
}

export interface DigestCounts {
  deadJobs: number;
  failedAttempts: number;
  published: number;
  accountsNeedingAttention: number;
  circuitsOpened: number;
}

export interface DigestMessage extends RenderedMail {
  /** Nothing a person needs to know: sent only with sendWhenEmpty. */
  empty: boolean;
  counts: DigestCounts;
}

/** At most this many dead jobs are listed one by one; the rest are "and N more". */
export const DIGEST_ITEM_LIMIT = 50;
/** Grouped error messages shown. */
export const DIGEST_TOP_ERRORS = 5;

/** The last digest of a workspace, for its settings page. */
export interface DigestSummaryRow {
  id: string;
  localDate: string;
  windowStart: Date;
  windowEnd: Date;
  outcome: 'queued' | 'empty';
  mailId: string | null;
  createdAt: Date;
}

/** A workspace's digest settings, as the notifications module keeps them. */
export interface DigestSettings {
  workspaceId: string;
  digestEnabled: boolean;
  /** When the digest was last switched on (null while it never was). */
  digestEnabledAt: Date | null;
  recipients: string[];
  hour: number;
  timezone: string;
  sendWhenEmpty: boolean;
}

/**
 * Where the digest reads its settings: the notifications module owns them and passes this in
 * (the digest sits below notifications in the module map, so it cannot ask for them itself).
 */
export interface DigestSettingsSource {
  /** Every workspace with the digest on. */
  enabled(): Promise<DigestSettings[]>;
  /** One workspace's settings (defaults when it never saved any), in `runner`'s transaction when given. */
  get(workspaceId: string, runner?: Sql): Promise<DigestSettings>;
}
