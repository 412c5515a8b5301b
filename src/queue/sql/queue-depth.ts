import type { Sql } from '../../database/db';

/**
 * How much work waits, for the metrics (queue.metrics.ts reads it at most once per refresh
 * interval per process, not once per scrape). Each state is counted on its own partial index
 * (jobs_ready for due and later, jobs_in_progress, jobs_paused_account), so the count costs what
 * is waiting, not what the table has ever held: finished and dead jobs are in none of them. One
 * statement (UNION ALL), one round trip; no one index serves a GROUP BY status over the four.
 */
const WAITING = `SELECT 'due' AS state, count(*)::int AS n FROM job_state WHERE status = 'scheduled' AND run_at <= now()
       UNION ALL SELECT 'later', count(*)::int FROM job_state WHERE status = 'scheduled' AND run_at > now()
       UNION ALL SELECT 'in_progress', count(*)::int FROM job_state WHERE status = 'in_progress'
       UNION ALL SELECT 'paused', count(*)::int FROM job_state WHERE status = 'paused'`;

export async function waitingCounts(q: Sql): Promise<Record<'due' | 'later' | 'in_progress' | 'paused', number>> {
  const rows = await q.query<{ state: 'due' | 'later' | 'in_progress' | 'paused'; n: number }>(WAITING);
  const counts = { due: 0, later: 0, in_progress: 0, paused: 0 };
  for (const r of rows) counts[r.state] = r.n;
  return counts;
}

/** Seconds since the oldest due job became due (0 when none is): the first entry of jobs_ready, not a scan. */
export async function oldestDueSeconds(q: Sql): Promise<number> {
  const rows = await q.query<{ s: number | null }>(
    `SELECT extract(epoch FROM now() - min(run_at))::float8 AS s FROM job_state WHERE status = 'scheduled' AND run_at <= now()`,
  );
  return Math.max(0, rows[0]?.s ?? 0);
}
