import type { Sql } from '../../database/db';

/**
 * No state change: the leases of the jobs this worker holds (running or waiting for a slot) are
 * pushed to now + lease, every third of a lease. An attempt may take longer than a lease (its own
 * deadline is WORKER_ATTEMPT_TIMEOUT_MS); what the lease measures is how long a worker may stay
 * silent before others take its jobs over. Returns the jobs still held: a missing one was taken
 * from us (its lease ran out while we could not reach the database, and another process
 * reclaimed it), and the worker stops treating it as its own.
 *
 * One statement for all held jobs (≤ WORKER_CONCURRENCY rows, by primary key).
 */
const SQL = `UPDATE job_state SET lease_expires_at = now() + $3 * interval '1 millisecond'
             WHERE job_id = ANY($2::uuid[]) AND status = 'in_progress' AND lease_owner = $1
             RETURNING job_id AS id`;

export async function extendLeases(q: Sql, owner: string, ids: string[], leaseMs: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await q.prepared<{ id: string }>('herald_extend_leases', SQL, [owner, ids, leaseMs]);
  return new Set(rows.map((r) => r.id));
}
