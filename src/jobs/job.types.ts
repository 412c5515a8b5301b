import { payloadParts, Provider, type MastodonOptions } from '../connectors/connector.interface';
import type { DeadReason, Decision } from '../retry/decide';
import type { ErrorClass } from '../retry/error-class';
import type { JobStatus } from '../queue/job-lifecycle';
import type { AttemptRow, JobRow } from '../queue/job-reads.types';

/** The rows the queue reads (JobReads), as this module's users receive them. */
export type { AccountActivityRow, AttemptRow, DeadJobRow, JobRow } from '../queue/job-reads.types';

/** One part of a thread job, as GET /v1/jobs/:id shows it. */
export interface JobPartView {
  /** 1-based: part 1 is the post's own text, part 2 the thread's first further part. */
  part: number;
  text: string;
  published: boolean;
  /** The platform's id of this part (Bluesky: its AT URI), once published. */
  remoteId: string | null;
  remoteUrl: string | null;
}

export interface JobView {
  id: string;
  /** null for an event endpoint's delivery (docs/events.md). */
  postId: string | null;
  accountId: string;
  provider: Provider;
  status: JobStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  idempotencyKey: string;
  errorClass: ErrorClass | null;
  lastError: string | null;
  deadReason: DeadReason | null;
  remoteId: string | null;
  remoteUrl: string | null;
  text: string;
  /** A thread job's parts, the first included, with each published part's id; null for a single post. */
  parts: JobPartView[] | null;
  /** A Mastodon job's visibility and content warning, as its target set them; null when none were set. */
  mastodon: MastodonOptions | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export interface AttemptView {
  number: number;
  startedAt: string;
  finishedAt: string;
  httpStatus: number | null;
  networkError: string | null;
  errorClass: ErrorClass;
  decision: Decision;
  retryAt: string | null;
  latencyMs: number;
  responseExcerpt: string | null;
  message: string | null;
  idempotencyKey: string;
  warnings: string[];
}

export function toJobView(j: JobRow): JobView {
  return {
    id: j.id,
    postId: j.postId,
    accountId: j.accountId,
    provider: j.provider,
    status: j.status,
    attemptCount: j.attemptCount,
    nextAttemptAt: j.status === 'scheduled' ? j.runAt.toISOString() : null,
    idempotencyKey: j.idempotencyKey,
    errorClass: j.errorClass,
    lastError: j.lastError,
    deadReason: j.deadReason,
    remoteId: j.remoteId,
    remoteUrl: j.remoteUrl,
    text: j.payload.text,
    parts: partsView(j),
    mastodon: j.payload.mastodon ?? null,
    createdAt: j.createdAt.toISOString(),
    updatedAt: j.updatedAt.toISOString(),
    finishedAt: j.finishedAt?.toISOString() ?? null,
  };
}

/**
 * The parts of a thread job: a part is published when the platform reported it (Bluesky, one
 * record per part) or when the whole job succeeded (a webhook takes every part in one delivery).
 */
export function partsView(j: Pick<JobRow, 'payload' | 'parts' | 'status'>): JobPartView[] | null {
  if (!j.payload.thread || j.payload.thread.length === 0) return null;
  const published = new Map((j.parts ?? []).map((p) => [p.index, p]));
  return payloadParts(j.payload).map((part, index) => {
    const done = published.get(index);
    return {
      part: index + 1,
      text: part.text,
      published: done !== undefined || j.status === 'succeeded',
      remoteId: done?.uri ?? null,
      remoteUrl: done?.url ?? null,
    };
  });
}

export function toAttemptView(a: AttemptRow): AttemptView {
  return {
    number: a.number,
    startedAt: a.startedAt.toISOString(),
    finishedAt: a.finishedAt.toISOString(),
    httpStatus: a.httpStatus,
    networkError: a.networkError,
    errorClass: a.errorClass,
    decision: a.decision,
    retryAt: a.retryAt?.toISOString() ?? null,
    latencyMs: a.latencyMs,
    responseExcerpt: a.responseExcerpt,
    message: a.message,
    idempotencyKey: a.idempotencyKey,
    warnings: a.warnings ? a.warnings.split('\n') : [],
  };
}
