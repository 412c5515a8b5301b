import type { Sql } from '../../database/db';
import type { AccountFailureRow, AccountJobCountsRow } from '../job-reads.types';

/**
 * What an account's jobs and attempts say about it: the settings page's account cards and an
 * alert's "N posts wait". Attempts have no account column: they are reached through the
 * account's jobs (attempts' (job_id, number) index from each job).
 */

/**
 * Per account, its latest failed attempt and its latest attempt refused for credentials (the
 * settings page's "last error at …" and "needs re-authentication since …"; the accounts row
 * keeps the last error's text but not its time).
 */
export function latestFailures(q: Sql, workspaceId: string, accountIds: string[]): Promise<AccountFailureRow[]> {
  if (accountIds.length === 0) return Promise.resolve([]);
  return q.query(
    `SELECT DISTINCT ON (j.account_id) j.account_id AS "accountId", a.finished_at AS "at", a.error_class AS "errorClass", a.message,
            max(a.finished_at) FILTER (WHERE a.error_class = 'auth') OVER (PARTITION BY j.account_id) AS "lastAuthAt"
     FROM attempts a JOIN jobs j ON j.id = a.job_id
     WHERE j.workspace_id = $1 AND j.account_id = ANY($2::uuid[]) AND a.error_class <> 'success'
     ORDER BY j.account_id, a.finished_at DESC, a.id DESC`,
    [workspaceId, accountIds],
  );
}

/** Per account, how many of its jobs wait (scheduled, paused), run, or are dead. */
export function jobCountsByAccount(q: Sql, workspaceId: string, accountIds: string[]): Promise<AccountJobCountsRow[]> {
  if (accountIds.length === 0) return Promise.resolve([]);
  return q.query(
    `SELECT account_id AS "accountId",
            count(*) FILTER (WHERE status = 'scheduled')::int AS scheduled,
            count(*) FILTER (WHERE status = 'paused')::int AS paused,
            count(*) FILTER (WHERE status = 'in_progress')::int AS "inProgress",
            count(*) FILTER (WHERE status = 'dead')::int AS dead
     FROM jobs
     WHERE workspace_id = $1 AND account_id = ANY($2::uuid[]) AND status IN ('scheduled', 'paused', 'in_progress', 'dead')
     GROUP BY account_id`,
    [workspaceId, accountIds],
  );
}

/** The account's jobs waiting for it (paused, or scheduled), for an alert's "N posts wait". */
export async function waitingJobsOfAccount(q: Sql, accountId: string): Promise<number> {
  const [{ n }] = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs WHERE account_id = $1 AND status IN ('paused', 'scheduled')`,
    [accountId],
  );
  return n;
}
