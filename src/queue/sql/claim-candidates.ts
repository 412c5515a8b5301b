import type { Tx } from '../../database/db';
import type { Candidate } from '../claim-plan';

/**
 * claim, step 1 (read): the due jobs a round may take, per account, in run_at order.
 *
 * Per account (active, circuit closed or cooled down), its due jobs in run_at order, at most as
 * many as it has free slots right now; then the earliest `limit` of all. The exact check happens
 * under the account locks (QueueRepository.round): this only keeps the rows we lock close to the
 * rows we can take, and a busy account's backlog from crowding out others.
 *
 * An account's jobs are leased by one process at a time (none while another process holds leases
 * on it), up to `prefetch` × its in-flight cap: the worker runs at most the cap at once and starts
 * the next leased job the moment one finishes, without waiting for a database round. Leases, not
 * running attempts, are what the database counts, so the cap holds across processes because only
 * the process holding the leases runs them.
 *
 * Shape: a LATERAL scan per account over the partial index jobs_ready_account (status =
 * 'scheduled' only: finished and dead jobs never slow it down; measured 0.88 ms → 1.13 ms with
 * 1,000,000 finished jobs in the table), `FOR UPDATE SKIP LOCKED` so concurrent claimers take
 * disjoint rows without waiting on each other. Rejected: one global `ORDER BY run_at LIMIT n`
 * scan, which lets one account's backlog fill every round while other accounts wait.
 * A job whose publishBy passed is not taken: it is expired, without an attempt, by the sweep.
 */
export const CLAIM_CANDIDATES_SQL = `SELECT c.id, a.id AS "accountId", now() AS now
             FROM (
               SELECT a.id, CASE WHEN f.others > 0 THEN 0 ELSE a.max_in_flight * $3 - f.total END AS free
               FROM accounts a
               CROSS JOIN LATERAL (
                 SELECT count(*) AS total, count(*) FILTER (WHERE x.lease_owner <> $2) AS others
                 FROM jobs x WHERE x.account_id = a.id AND x.status = 'in_progress'
               ) f
               WHERE a.status = 'active' AND a.deleted_at IS NULL
                 AND (a.circuit_state = 'closed' OR a.circuit_open_until <= now())
             ) a
             CROSS JOIN LATERAL (
               SELECT j.id, j.run_at FROM jobs j
               WHERE j.account_id = a.id AND j.status = 'scheduled' AND j.run_at <= now()
                 AND (j.publish_by IS NULL OR j.publish_by >= now())
               ORDER BY j.run_at
               LIMIT greatest(a.free, 0)
               FOR UPDATE SKIP LOCKED
             ) c
             WHERE a.free > 0
             ORDER BY c.run_at
             LIMIT $1`;

export function claimCandidates(tx: Tx, limit: number, owner: string, prefetch: number): Promise<(Candidate & { now: Date })[]> {
  return tx.prepared<Candidate & { now: Date }>('herald_claim_candidates', CLAIM_CANDIDATES_SQL, [limit, owner, prefetch]);
}
