import type { Sql } from '../../database/db';

/**
 * The earliest run_at of a scheduled job after now() (the statement's transaction's start), so
 * an idle worker sleeps exactly until the next job is due. Jobs already due but held back (open
 * circuit, full account) are not counted: the poll interval re-checks those, so an idle worker
 * never spins on them. min() over jobs_ready (run_at) WHERE scheduled is its first entry past
 * now(). A prepared statement: every round that ends idle runs it, inside the round's
 * transaction (JobStore.round), so its now() is the claim's: a job is either due for that claim
 * or counted here, never neither.
 */
export async function nextScheduledRunAt(q: Sql): Promise<Date | null> {
  const rows = await q.prepared<{ runAt: Date | null }>(
    'herald_next_run_at',
    `SELECT min(run_at) AS "runAt" FROM job_state WHERE status = 'scheduled' AND run_at > now()`,
  );
  return rows[0]?.runAt ?? null;
}
