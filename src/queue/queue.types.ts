import type { JobPayload, Provider, PublishedPart } from '../connectors/connector.interface';
import type { AccountFeedback, LockedAccount } from '../account-state/account-state';
import type { Tx } from '../database/db';
import type { Circuit } from '../retry/circuit-breaker';
import type { RetryPolicyOverride } from '../retry/backoff';
import type { DeadReason, Decision } from '../retry/decide';
import type { ErrorClass } from '../retry/error-class';

/** A job as a claim hands it to the worker: leased to it until its lease ends (renewed while held). */
export interface ClaimedJob {
  id: string;
  /** null for an event endpoint's delivery (its payload is the event). */
  postId: string | null;
  accountId: string;
  workspaceId: string;
  provider: Provider;
  idempotencyKey: string;
  /** The number of the attempt this claim starts (1-based, whole history). */
  attemptNumber: number;
  /** Attempts of the current budget before this one (a requeue starts a new budget). */
  attemptsInBudget: number;
  payload: JobPayload;
  /** The thread's parts published by earlier attempts (jobs.parts). */
  published: PublishedPart[];
  publishBy: Date | null;
  previousErrorClass: ErrorClass | null;
  previousHttpStatus: number | null;
  previousNetworkError: string | null;
  /** The account's credentials version when the job was claimed. */
  credentialsVersion: number;
  retryPolicy: RetryPolicyOverride | null;
  /** The account's cap on attempts running at once. */
  maxInFlight: number;
  claimedAt: Date;
}

/** One finished attempt, as the worker reports it. */
export interface FinishedAttempt {
  jobId: string;
  accountId: string;
  attemptNumber: number;
  idempotencyKey: string;
  startedAt: Date;
  finishedAt: Date;
  httpStatus: number | null;
  networkError: string | null;
  errorClass: ErrorClass;
  message: string | null;
  responseExcerpt: string | null;
  decision: Decision;
  /** For `retry`: wait before the next attempt, added to the database clock. */
  delayMs: number | null;
  deadReason: DeadReason | null;
  remoteId: string | null;
  remoteUrl: string | null;
  /** Every part of a thread published so far (jobs.parts), when the connector reported them; null: unchanged. */
  parts: PublishedPart[] | null;
  warnings: string[];
  /** The credentials version the attempt used (an auth failure of older credentials pauses nothing). */
  credentialsVersion: number;
  /** Credentials the attempt refreshed, sealed, stored only if still based on the current version. */
  refreshedCredentials: string | null;
}

/** A leased job given back or expired without an attempt. */
export interface LeasedJobRef {
  id: string;
  attemptNumber: number;
}

/** What one round did. */
export interface RoundResult {
  /** Jobs whose finished attempt was recorded under its lease. */
  recorded: Set<string>;
  /** Successes recorded after their lease was lost (record-late-successes.ts). */
  recordedLate: Set<string>;
  claimed: ClaimedJob[];
  /** Accounts not active after this round: their waiting jobs must be paused. */
  notActive: string[];
  /** When asked for (RoundInput.nextRunAt): the next scheduled job's run_at after the claim's now(), or null. */
  nextRunAt?: Date | null;
  /** When an account in its slow start may lease more (ClaimPlan.wakeAt), in the database's clock; null: none ramps. */
  wakeAt: Date | null;
  /** Event deliveries this round wrote (docs/events.md): due now, so the worker claims again. */
  eventsWritten: number;
}

/** The slow start's settings (WORKER_SLOW_START_MS, WORKER_SLOW_START_RATE; worker/slow-start.ts). */
export interface SlowStart {
  /** The ramp's length, ms; 0: no slow start. */
  rampMs: number;
  /** An account's request rate at the end of the ramp, per second; 0: the in-flight ramp alone. */
  ratePerS: number;
}

/** A due job found by the claim's candidate scan, in run_at order. */
export interface Candidate {
  id: string;
  accountId: string;
}

/** The account of some candidates, read under its row lock. */
export interface AccountSlot {
  id: string;
  /** The account's cap on attempts running at once. */
  maxInFlight: number;
  /** Jobs leased per in-flight slot (see claim-candidates.ts); 0 while another process holds leases on the account. */
  prefetch: number;
  /** Jobs of the account leased now (by any process). */
  inFlight: number;
  circuit: Circuit;
  /** When its circuit last closed after being open or half-open (as this round leaves it): the slow start counts from it. */
  closedAt: Date | null;
  /** Jobs leased since that close while the slow start ran (0 from the close on): the rate ramp's count. */
  slowStartLeased: number;
}

export interface ClaimPlan {
  /** Job ids to start now, in run_at order. */
  take: string[];
  /** Accounts whose half-open probe this claim takes (exactly one job each). */
  probes: string[];
  /** Jobs taken per account whose slow start runs: added to its count (slow_start_leased) in the same transaction. */
  slowStartLeased: Map<string, number>;
  /** The earliest moment a ramping account's rate budget grows (null: none ramps). */
  wakeAt: Date | null;
}

/**
 * The account side of a worker round, run in the round's transaction: locks, delivery state and
 * credentials an attempt refreshed (account-state, the accounts table's writer). The worker supplies it.
 */
export interface RoundAccounts {
  lock(tx: Tx, ids: string[]): Promise<LockedAccount[]>;
  applyFeedback(tx: Tx, decided: Map<string, AccountFeedback>): Promise<unknown>;
  startProbes(tx: Tx, accountIds: string[], leaseMs: number): Promise<unknown>;
  countSlowStartLeases(tx: Tx, leased: Map<string, number>): Promise<unknown>;
  storeRefreshedCredentials(tx: Tx, updates: { accountId: string; sealed: string; basedOnVersion: number }[]): Promise<unknown>;
}

/** A job to write with its post (enqueue); its status from `enqueueStatus`. */
export interface NewJob {
  id: string;
  accountId: string;
  provider: string;
  status: 'scheduled' | 'paused';
  textOverride: string | null;
  idempotencyKey: string;
}

/** What an idle worker needs to know to sleep until something of the queue can need it. */
export interface DueMoments {
  /** The database's clock when this was read: the moments below are on it. */
  now: Date;
  /**
   * Jobs due now that no claim took (an open circuit cooling down, an account full with another
   * process's leases, a slow start's spent budget, a row another transaction holds): nothing
   * announces when they become claimable, so the worker looks again every poll interval.
   */
  dueWaiting: boolean;
  /** The earliest lease of a running job, any process's: if its worker died, crash recovery takes it then. */
  leaseExpiresAt: Date | null;
  /** The earliest publishBy of a waiting job (scheduled or paused): the deadline sweep makes it dead then. */
  publishBy: Date | null;
}
