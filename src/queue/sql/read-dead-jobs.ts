import type { Keyset } from '../../common/pagination';
import type { Sql } from '../../database/db';
import { compose, param, raw, sql, SqlPiece } from '../../database/statement';
import type { JobStatus } from '../job-lifecycle';
import type { DlqFilter, DlqRow } from '../job-reads.types';
import { JOB_COLUMNS, REVIVE_KEY_SQL } from './job-columns';

/**
 * The dead-letter queue's reads: dead and discarded jobs with their account, scoped by
 * workspace. No lock: its changes (edit, requeue, discard) lock the jobs first (lock-jobs.ts)
 * and are guarded by `status = 'dead'`. The key a requeue would send is REVIVE_KEY_SQL, the
 * expression revive-dead-jobs.ts writes, so the view cannot announce another key than the one sent.
 */
const DLQ_COLUMNS = raw(`${JOB_COLUMNS},
  CASE WHEN j.status IN ('dead', 'discarded') THEN j.finished_at END AS "deadAt",
  (extract(epoch FROM j.finished_at) * 1000000)::bigint::text AS "deadAtMicros",
  j.payload_edited_at AS "payloadEditedAt", j.payload_changed_since_key AS "payloadChangedSinceKey",
  ${REVIVE_KEY_SQL} AS "requeueKey", j.publish_by AS "publishBy",
  a.name AS "accountName", a.status AS "accountStatus", a.status_reason AS "accountStatusReason",
  a.deleted_at IS NOT NULL AS "accountDeleted"`);

/** `%`, `_` and `\` are LIKE metacharacters: a search for "100%" means those characters. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The filter over `jobs j`: shared by the list and the bulk requeue, so "requeue what the list shows" is one definition. */
function filterSql(f: DlqFilter): SqlPiece {
  const account = param(f.accountId ?? null);
  const provider = param(f.provider ?? null);
  const errorClass = param(f.errorClass ?? null);
  const deadReason = param(f.deadReason ?? null);
  const from = param(f.from ?? null);
  const to = param(f.to ?? null);
  const q = param(f.q === undefined ? null : likeEscape(f.q));
  return sql`(${account}::uuid IS NULL OR j.account_id = ${account})
      AND (${provider}::text IS NULL OR j.provider = ${provider})
      AND (${errorClass}::text IS NULL OR j.error_class = ${errorClass})
      AND (${deadReason}::text IS NULL OR j.dead_reason = ${deadReason})
      AND (${from}::timestamptz IS NULL OR j.finished_at >= ${from})
      AND (${to}::timestamptz IS NULL OR j.finished_at < ${to})
      AND (${q}::text IS NULL OR j.last_error ILIKE '%' || ${q} || '%')`;
}

/**
 * Newest death first, over the partial index jobs_dlq (workspace_id, finished_at DESC, id DESC);
 * posts' jobs only (an event endpoint's failed deliveries are listed with their endpoint:
 * docs/events.md), here and in the bulk requeue.
 */
export function listDeadJobs(
  q: Sql,
  workspaceId: string,
  statuses: JobStatus[],
  filter: DlqFilter,
  after: Keyset | null,
  limit: number,
): Promise<DlqRow[]> {
  const micros = param(after?.micros ?? null);
  const { text, values } = compose(
    sql`SELECT ${DLQ_COLUMNS} FROM jobs j JOIN accounts a ON a.id = j.account_id
       WHERE j.workspace_id = ${param(workspaceId)} AND j.status = ANY(${param(statuses)}::text[]) AND j.post_id IS NOT NULL
         AND (${micros}::bigint IS NULL OR (j.finished_at, j.id) < ('epoch'::timestamptz + ${micros}::bigint * interval '1 microsecond', ${param(after?.id ?? null)}::uuid))
         AND ${filterSql(filter)}
       ORDER BY j.finished_at DESC, j.id DESC LIMIT ${param(limit + 1)}`,
  );
  return q.query(text, values);
}

/** Any job of the workspace with its account (the view says its status: a requeued job's page stays readable). */
export async function findDeadJob(q: Sql, workspaceId: string, id: string): Promise<DlqRow | null> {
  const { text, values } = compose(
    sql`SELECT ${DLQ_COLUMNS} FROM jobs j JOIN accounts a ON a.id = j.account_id WHERE j.workspace_id = ${param(workspaceId)} AND j.id = ${param(id)}`,
  );
  const rows = await q.query<DlqRow>(text, values);
  return rows[0] ?? null;
}

/**
 * Up to `limit` dead jobs matching the filter, in id order, for a bulk requeue, which then
 * locks them (lock-jobs.ts, dead ones only): a job requeued by someone else in between drops
 * out there, so it is neither taken twice nor reported.
 */
export async function deadIdsMatching(q: Sql, workspaceId: string, filter: DlqFilter, limit: number): Promise<string[]> {
  const { text, values } = compose(
    sql`SELECT j.id FROM jobs j WHERE j.workspace_id = ${param(workspaceId)} AND j.status = 'dead' AND j.post_id IS NOT NULL AND ${filterSql(filter)} ORDER BY j.id LIMIT ${param(limit)}`,
  );
  return (await q.query<{ id: string }>(text, values)).map((r) => r.id);
}

/**
 * Dead jobs per provider and dead reason, for the DLQ size gauge. Reads the dead rows through
 * the partial jobs_dlq index (dead and discarded jobs only); the metrics layer runs it at most
 * once per refresh interval per process, not once per scrape.
 */
export function deadByProviderAndReason(q: Sql): Promise<{ provider: string; reason: string; n: number }[]> {
  return q.query(
    `SELECT provider, dead_reason AS reason, count(*)::int AS n FROM jobs WHERE status = 'dead' GROUP BY provider, dead_reason`,
  );
}
