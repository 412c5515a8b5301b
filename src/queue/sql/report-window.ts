import type { Sql } from '../../database/db';
import type { AccountActivityRow, DeadJobRow } from '../job-reads.types';

/**
 * Jobs and attempts over a window of time [from, to), for the daily digest. Nothing here locks
 * or changes a row. Attempts are found by finish time through the BRIN index
 * attempts_finished_brin (a day's attempts are a range of the table); dead jobs by death time
 * through jobs_dlq. Each takes the caller's runner (the digest reads inside its transaction).
 */

/**
 * Event endpoints' deliveries (jobs of an event, not of a post) are not the digest's: the page
 * shows them with their endpoint (docs/events.md).
 *
 * Per account of the workspace with anything in the window: attempts that succeeded (one per
 * published job), attempts that failed, and jobs that died and are still dead.
 */
export function windowActivity(q: Sql, workspaceId: string, from: Date, to: Date): Promise<AccountActivityRow[]> {
  return q.query(
    `WITH tried AS (
       SELECT j.account_id,
              count(*) FILTER (WHERE t.error_class = 'success')::int AS published,
              count(*) FILTER (WHERE t.error_class <> 'success')::int AS failed
       FROM attempts t JOIN jobs j ON j.id = t.job_id
       WHERE t.finished_at >= $2 AND t.finished_at < $3 AND j.workspace_id = $1
       GROUP BY j.account_id
     ), died AS (
       SELECT account_id, count(*)::int AS dead FROM jobs
       WHERE workspace_id = $1 AND status = 'dead' AND finished_at >= $2 AND finished_at < $3
       GROUP BY account_id
     )
     SELECT a.id AS "accountId", a.name AS "accountName", a.provider,
            coalesce(tried.published, 0) AS published, coalesce(tried.failed, 0) AS "failedAttempts",
            coalesce(died.dead, 0) AS "newlyDead"
     FROM tried FULL JOIN died ON died.account_id = tried.account_id
     JOIN accounts a ON a.id = coalesce(tried.account_id, died.account_id)
     WHERE a.purpose = 'publish'
     ORDER BY a.name, a.id`,
    [workspaceId, from, to],
  );
}

/** Jobs that died in the window and are still dead, newest first: at most `limit`, and how many in all (counted only past `limit`). */
export async function windowDead(
  q: Sql,
  workspaceId: string,
  from: Date,
  to: Date,
  limit: number,
): Promise<{ items: DeadJobRow[]; total: number }> {
  const items = await q.query<DeadJobRow>(
    `SELECT j.id AS "jobId", j.account_id AS "accountId", a.name AS "accountName", j.provider,
            coalesce(j.payload->>'text', '') AS text, j.error_class AS "errorClass", j.dead_reason AS "deadReason",
            j.last_error AS "lastError", j.finished_at AS "deadAt"
     FROM jobs j JOIN accounts a ON a.id = j.account_id
     WHERE j.workspace_id = $1 AND j.status = 'dead' AND j.finished_at >= $2 AND j.finished_at < $3 AND j.post_id IS NOT NULL
     ORDER BY j.finished_at DESC, j.id DESC LIMIT $4`,
    [workspaceId, from, to, limit],
  );
  if (items.length < limit) return { items, total: items.length };
  const [{ n }] = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs WHERE workspace_id = $1 AND status = 'dead' AND finished_at >= $2 AND finished_at < $3 AND post_id IS NOT NULL`,
    [workspaceId, from, to],
  );
  return { items, total: n };
}

/** The most frequent error messages of the window's failed attempts. */
export function windowTopErrors(
  q: Sql,
  workspaceId: string,
  from: Date,
  to: Date,
  limit: number,
): Promise<{ message: string; count: number }[]> {
  return q.query(
    `SELECT coalesce(t.message, t.network_error, 'HTTP ' || t.http_status, t.error_class) AS message, count(*)::int AS count
     FROM attempts t JOIN jobs j ON j.id = t.job_id
     WHERE t.finished_at >= $2 AND t.finished_at < $3 AND j.workspace_id = $1 AND t.error_class <> 'success'
     GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $4`,
    [workspaceId, from, to, limit],
  );
}
