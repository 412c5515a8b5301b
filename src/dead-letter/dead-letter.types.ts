import type { AuditActor, AuditEventView, NewAuditEntry } from '../audit/audit.types';
import type { JobPayload } from '../connectors/connector.interface';
import type { AccountStatus } from '../account-state/account-state';
import { AttemptView, JobView, toJobView } from '../jobs/job.types';
import type { DlqRow } from '../queue/job-reads.types';

export type { DlqRow } from '../queue/job-reads.types';

export type AuditAction = 'edit' | 'requeue' | 'discard';

/** A change to a dead job, for the audit trail (src/audit, kind `failed_post`). */
export interface NewAudit {
  jobId: string;
  action: AuditAction;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

const SUMMARIES: Record<AuditAction, string> = {
  edit: 'Edited a failed post',
  requeue: 'Requeued a failed post',
  discard: 'Discarded a failed post',
};

export function toAuditEntry(a: NewAudit): NewAuditEntry {
  return { kind: 'failed_post', action: a.action, subjectId: a.jobId, summary: SUMMARIES[a.action], before: a.before, after: a.after };
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
  /** The API key that did it; null when a person did it on the page (see `actor`). */
  apiKeyId: string | null;
  actor: AuditActor;
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

/** A failed post's trail as GET /v1/dlq/:jobId shows it (its edits, requeues and discards). */
export function toAuditView(e: AuditEventView): AuditView {
  return {
    action: e.action as AuditAction,
    apiKeyId: e.actor.kind === 'key' ? e.actor.id : null,
    actor: e.actor,
    before: e.before ?? {},
    after: e.after ?? {},
    at: e.at,
  };
}
