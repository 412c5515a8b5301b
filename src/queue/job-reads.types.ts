import type { AccountStatus } from '../account-state/account-state';
import type { JobPayload, Provider, PublishedPart } from '../connectors/connector.interface';
import type { DeadReason, Decision } from '../retry/decide';
import type { ErrorClass } from '../retry/error-class';
import type { JobStatus } from './job-lifecycle';

/** Rows of the queue's reads (JobReads; every statement in ./sql), as the other modules receive them. */

/** A job as the `jobs` view shows it (its payload row and its state row, joined). */
export interface JobRow {
  id: string;
  /** null for an event endpoint's delivery (docs/events.md): its payload is the event. */
  postId: string | null;
  accountId: string;
  workspaceId: string;
  provider: Provider;
  status: JobStatus;
  runAt: Date;
  attemptCount: number;
  attemptBase: number;
  idempotencyKey: string;
  textOverride: string | null;
  payload: JobPayload;
  errorClass: ErrorClass | null;
  lastError: string | null;
  deadReason: DeadReason | null;
  remoteId: string | null;
  remoteUrl: string | null;
  /** The thread's parts the platform published so far (jobs.parts). */
  parts: PublishedPart[];
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export interface AttemptRow {
  number: number;
  startedAt: Date;
  finishedAt: Date;
  httpStatus: number | null;
  networkError: string | null;
  errorClass: ErrorClass;
  decision: Decision;
  retryAt: Date | null;
  latencyMs: number;
  responseExcerpt: string | null;
  message: string | null;
  idempotencyKey: string;
  warnings: string | null;
}

/** A dead (or discarded) job with its account, as the dead-letter queue lists and shows it. */
export interface DlqRow extends JobRow {
  deadAt: Date | null;
  /** finished_at in microseconds since the epoch (the list's keyset; a Date keeps only ms). */
  deadAtMicros: string | null;
  payloadEditedAt: Date | null;
  payloadChangedSinceKey: boolean;
  /** The key a requeue would send now: a new one iff the payload changed since this one was issued. */
  requeueKey: string;
  publishBy: Date | null;
  accountName: string;
  accountStatus: AccountStatus;
  accountStatusReason: string | null;
  accountDeleted: boolean;
}

/** What the dead-letter queue's list and its bulk requeue select, each field optional. */
export interface DlqFilter {
  accountId?: string;
  provider?: Provider;
  errorClass?: string;
  deadReason?: string;
  from?: Date;
  to?: Date;
  /** Plain text (not a pattern) to find in last_error, case-insensitively. */
  q?: string;
}

/** Per account, what happened in a window (the digest). */
export interface AccountActivityRow {
  accountId: string;
  accountName: string;
  provider: Provider;
  published: number;
  failedAttempts: number;
  newlyDead: number;
}

/** A job that died in a window and is still dead (the digest). */
export interface DeadJobRow {
  jobId: string;
  accountId: string;
  accountName: string;
  provider: Provider;
  text: string;
  errorClass: string | null;
  deadReason: string | null;
  lastError: string | null;
  deadAt: Date;
}

/** Per account, its latest failed attempt and its latest attempt refused for credentials. */
export interface AccountFailureRow {
  accountId: string;
  at: Date;
  errorClass: string;
  message: string | null;
  lastAuthAt: Date | null;
}

/** Per account, how many of its jobs wait (scheduled, paused), run, or are dead. */
export interface AccountJobCountsRow {
  accountId: string;
  scheduled: number;
  paused: number;
  inProgress: number;
  dead: number;
}

/** One delivery of an event to an endpoint (a job of an event), as the page and the API list them. */
export interface EventDeliveryRow {
  id: string;
  eventId: string;
  eventType: string;
  status: JobStatus;
  attemptCount: number;
  lastHttpStatus: number | null;
  lastNetworkError: string | null;
  errorClass: ErrorClass | null;
  lastError: string | null;
  deadReason: DeadReason | null;
  runAt: Date;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}
