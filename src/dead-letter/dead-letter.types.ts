import type { JobPayload } from '../connectors/connector.interface';
import type { AccountStatus } from '../account-state/account-state';
import { AttemptView, JobRow, JobView, toJobView } from '../jobs/job.types';

/** A dead (or discarded) job as the DLQ repository reads it. */
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

export type AuditAction = 'edit' | 'requeue' | 'discard';

export interface AuditRow {
  id: string;
  action: AuditAction;
  apiKeyId: string | null;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
  createdAt: Date;
}

export interface NewAudit {
  jobId: string;
  action: AuditAction;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

/** One entry of GET /v1/dlq. */
export interface DlqEntryView extends JobView {
  deadAt: string | null;
  payloadEditedAt: string | null;
  account: { id: string; name: string; status: AccountStatus; statusReason: string | null; deleted: boolean };
}

/** GET /v1/dlq/:jobId: everything a person needs to fix the job and send it again. */
export interface DlqDetailView extends DlqEntryView {
  /** The payload as the next attempt would send it. */
  payload: JobPayload;
  publishBy: string | null;
  /** The idempotency key a requeue would use now (unchanged unless the payload was edited). */
  requeueIdempotencyKey: string;
  attempts: AttemptView[];
  audit: AuditView[];
}

export interface AuditView {
  action: AuditAction;
  apiKeyId: string | null;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
  at: string;
}

export function toDlqEntryView(r: DlqRow): DlqEntryView {
  return {
    ...toJobView(r),
    deadAt: r.deadAt?.toISOString() ?? null,
    payloadEditedAt: r.payloadEditedAt?.toISOString() ?? null,
    account: {
      id: r.accountId,
      name: r.accountName,
      status: r.accountStatus,
      statusReason: r.accountStatusReason,
      deleted: r.accountDeleted,
    },
  };
}

export function toAuditView(a: AuditRow): AuditView {
  return { action: a.action, apiKeyId: a.apiKeyId, before: a.before, after: a.after, at: a.createdAt.toISOString() };
}
