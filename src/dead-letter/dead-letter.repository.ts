import { Injectable } from '@nestjs/common';
import type { Keyset } from '../common/pagination';
import { Db, Sql, Tx } from '../database/db';
import type { Provider } from '../connectors/connector.interface';
import type { JobStatus } from '../queue/job-lifecycle';
import { JOB_COLUMNS, REVIVE_KEY_SQL } from '../queue/job-columns';
import type { AuditRow, DlqRow, NewAudit } from './dead-letter.types';

const DLQ_COLUMNS = `${JOB_COLUMNS},
  CASE WHEN j.status IN ('dead', 'discarded') THEN j.finished_at END AS "deadAt",
  (extract(epoch FROM j.finished_at) * 1000000)::bigint::text AS "deadAtMicros",
  j.payload_edited_at AS "payloadEditedAt", j.payload_changed_since_key AS "payloadChangedSinceKey",
  ${REVIVE_KEY_SQL} AS "requeueKey", j.publish_by AS "publishBy",
  a.name AS "accountName", a.status AS "accountStatus", a.status_reason AS "accountStatusReason",
  a.deleted_at IS NOT NULL AS "accountDeleted"`;

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

/** Keyset of the DLQ list: the shared list keyset, over death time (µs) and id. */
export type DlqKeyset = Keyset;

/** `%`, `_` and `\` are LIKE metacharacters: a search for "100%" means those characters. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The filter as SQL over `jobs j`, its parameters numbered from `first`. Shared by the list and
 * the bulk requeue, so "requeue what the list shows" is one definition.
 */
function filterSql(f: DlqFilter, first: number): { where: string; params: unknown[] } {
  const n = (i: number) => `$${first + i}`;
  return {
    where: `(${n(0)}::uuid IS NULL OR j.account_id = ${n(0)})
      AND (${n(1)}::text IS NULL OR j.provider = ${n(1)})
      AND (${n(2)}::text IS NULL OR j.error_class = ${n(2)})
      AND (${n(3)}::text IS NULL OR j.dead_reason = ${n(3)})
      AND (${n(4)}::timestamptz IS NULL OR j.finished_at >= ${n(4)})
      AND (${n(5)}::timestamptz IS NULL OR j.finished_at < ${n(5)})
      AND (${n(6)}::text IS NULL OR j.last_error ILIKE '%' || ${n(6)} || '%')`,
    params: [
      f.accountId ?? null,
      f.provider ?? null,
      f.errorClass ?? null,
      f.deadReason ?? null,
      f.from ?? null,
      f.to ?? null,
      f.q === undefined ? null : likeEscape(f.q),
    ],
  };
}

/**
 * SQL of the dead-letter queue: reads of dead and discarded jobs with their account, the row
 * locks its changes take, and the audit trail (job_audit, this module's table). The changes
 * themselves (edit, requeue, discard) are the queue's operations (JobLifecycle), each guarded by
 * `status = 'dead'` on top of these locks, so whatever races them (a second requeue, a manual
 * retry, a discard) exactly one of them changes the job. Every read and lock is scoped by
 * workspace.
 *
 * Lock order, as everywhere in Herald: job rows first (in id order), then account rows (in id
 * order).
 */
@Injectable()
export class DeadLetterRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Newest death first, over the partial index jobs_dlq (workspace_id, finished_at DESC, id DESC). */
  list(workspaceId: string, statuses: JobStatus[], filter: DlqFilter, after: DlqKeyset | null, limit: number): Promise<DlqRow[]> {
    const f = filterSql(filter, 6);
    return this.db.query(
      `SELECT ${DLQ_COLUMNS} FROM jobs j JOIN accounts a ON a.id = j.account_id
       WHERE j.workspace_id = $1 AND j.status = ANY($2::text[])
         AND ($3::bigint IS NULL OR (j.finished_at, j.id) < ('epoch'::timestamptz + $3::bigint * interval '1 microsecond', $4::uuid))
         AND ${f.where}
       ORDER BY j.finished_at DESC, j.id DESC LIMIT $5`,
      [workspaceId, statuses, after?.micros ?? null, after?.id ?? null, limit + 1, ...f.params],
    );
  }

  async find(workspaceId: string, id: string, m?: Sql): Promise<DlqRow | null> {
    const rows: DlqRow[] = await (m ?? this.db).query(
      `SELECT ${DLQ_COLUMNS} FROM jobs j JOIN accounts a ON a.id = j.account_id WHERE j.workspace_id = $1 AND j.id = $2`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  audit(jobId: string): Promise<AuditRow[]> {
    return this.db.query(
      `SELECT id::text, action, api_key_id AS "apiKeyId", before, after, created_at AS "createdAt"
       FROM job_audit WHERE job_id = $1 ORDER BY id`,
      [jobId],
    );
  }

  /**
   * Up to `limit` dead jobs matching the filter, in id order, for a bulk requeue, which then
   * locks them through the queue (JobLifecycle.lockJobs, dead ones only): a job requeued by
   * someone else in between drops out there, so it is neither taken twice nor reported.
   */
  async deadIdsMatching(workspaceId: string, filter: DlqFilter, limit: number): Promise<string[]> {
    const f = filterSql(filter, 3);
    const rows = await this.db.query<{ id: string }>(
      `SELECT j.id FROM jobs j WHERE j.workspace_id = $1 AND j.status = 'dead' AND ${f.where} ORDER BY j.id LIMIT $2`,
      [workspaceId, limit, ...f.params],
    );
    return rows.map((r) => r.id);
  }

  async insertAudit(m: Sql, workspaceId: string, apiKeyId: string, entries: NewAudit[]): Promise<void> {
    if (entries.length === 0) return;
    await m.query(
      `INSERT INTO job_audit (job_id, workspace_id, api_key_id, action, before, after)
       SELECT r.job_id, $1, $2, r.action, r.before, r.after
       FROM unnest($3::uuid[], $4::text[], $5::jsonb[], $6::jsonb[]) AS r(job_id, action, before, after)`,
      [
        workspaceId,
        apiKeyId,
        entries.map((e) => e.jobId),
        entries.map((e) => e.action),
        entries.map((e) => JSON.stringify(e.before)),
        entries.map((e) => JSON.stringify(e.after)),
      ],
    );
  }

  /**
   * Dead jobs per provider and dead reason, for the DLQ size gauge. Reads the dead rows through
   * the partial jobs_dlq index (dead and discarded jobs only); the metrics layer runs it at most
   * once per refresh interval per process, not once per scrape.
   */
  deadByProviderAndReason(): Promise<{ provider: string; reason: string; n: number }[]> {
    return this.db.query(
      `SELECT provider, dead_reason AS reason, count(*)::int AS n FROM jobs WHERE status = 'dead' GROUP BY provider, dead_reason`,
    );
  }
}
