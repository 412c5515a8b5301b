import type { Tx } from '../../database/db';
import type { Candidate, SlowStart } from '../queue.types';

/**
 * claim, step 1 (read): the due jobs a round may take, per account, in run_at order.
 *
 * Per account (active, circuit closed or cooled down), its due jobs in run_at order, at most as
 * many as it has free slots right now; then the earliest `limit` of all. The exact check happens
 * under the account locks (JobStore.round): this only keeps the rows we lock close to the
 * rows we can take, and a busy account's backlog from crowding out others.
 *
 * An account's jobs are leased by one process at a time (none while another process holds leases
 * on it), up to `prefetch` × its in-flight cap: the worker runs at most the cap at once and starts
 * the next leased job the moment one finishes, without waiting for a database round. Leases, not
 * running attempts, are what the database counts, so the cap holds across processes because only
 * the process holding the leases runs them.
 *
 * Shape. Only accounts with something scheduled are looked at ("ready accounts"): a skip scan of
 * the partial index jobs_ready_account (status = 'scheduled', ordered by account then run_at)
 * steps from one account's first scheduled job to the next account's, one index descent per
 * account that has scheduled jobs; those whose first job is not due yet are dropped there.
 * Accounts with nothing scheduled (idle, or all their work done) cost nothing, so a round costs
 * the same with 20 accounts as with 10,000 of which 9,980 are idle (measured 2.09 ms →
 * 2,890 ms before, on a loaded machine; see docs/benchmarks.md for the figures after). Then,
 * for those accounts only: active, circuit closed or cooled down, its free slots (leases held),
 * and a LATERAL scan of its due jobs over the same index, `FOR UPDATE SKIP LOCKED` so concurrent
 * claimers take disjoint rows without waiting on each other. Finished and dead jobs are not in
 * the index: they never slow the claim down. Rejected: one global `ORDER BY run_at LIMIT n`
 * scan, which lets one account's backlog fill every round while other accounts wait.
 * A job whose publishBy passed is not taken: it is expired, without an attempt, by the sweep.
 *
 * Which accounts are scanned. Every row the per-account scan returns is locked (FOR UPDATE: a
 * lock written into the row, a WAL record), and the round takes only the `limit` earliest. So
 * the accounts are taken in the order of their earliest due job, only until their free slots
 * add up to twice the limit (the window sum `before`): with 200 busy accounts of 10 free slots
 * each, ~20 accounts and ~200 rows locked for a round of 100, instead of all 200 accounts and
 * ~2,000 rows (measured: the scan was 35 µs of database CPU per job claimed, a third of the
 * whole, on 200 accounts; docs/benchmarks.md). Twice, not once: rows another process's round
 * holds at this moment are skipped (SKIP LOCKED), and the rest of the margin still fills the
 * round. The oldest work goes first, whichever account it is on, and an account offers at most
 * its free slots, so a backlog still cannot crowd out the others.
 *
 * Slow start ($4, WORKER_SLOW_START_MS; worker/slow-start.ts): an account whose circuit closed
 * less than $4 ms ago (circuit_closed_at) has only its ramped cap of leases, without prefetch,
 * the same formula as leaseCapacity, so the rows scanned and locked for it are the ones the plan
 * can take and a ramping account's backlog does not fill the round's limit in place of other
 * accounts' work. The elapsed time is counted 1 ms longer than the plan counts it (the plan
 * reads times truncated to milliseconds): this side may offer one row more at a step of the
 * ramp, never one fewer. The rate ramp ($5, WORKER_SLOW_START_RATE; slowStartBudget) bounds the
 * same account's rows by its budget for that time minus `slow_start_leased`, the jobs leased
 * since the close: an account whose budget is spent offers none (the plan sets the moment it
 * grows: ClaimPlan.wakeAt).
 *
 * The per-account scan is written as a row comparison on (account_id, run_at), the key of
 * jobs_ready_account, ordered by that key. Written plainly (`account_id = a.id AND run_at <=
 * now() ORDER BY run_at`), the planner chose jobs_ready (run_at alone: better correlated with the
 * heap) and filtered out every other account's due jobs on the way: 2,682 rows read per account
 * for 10 taken, 8.2 ms a round with 20 accounts and 30,000 due jobs. Only jobs_ready_account can
 * serve this form: 0.9 ms, and the claim's database CPU fell from ~45 to ~10 µs per job
 * (measured with the round's statements replayed on their own; docs/benchmarks.md).
 */
/**
 * The slow start's ramp as the scan computes it, in two pieces so that a test can run them alone
 * on PostgreSQL against leaseCapacity (worker/slow-start.ts), which the plan uses
 * (test/slow-start-sql.test.ts). SINCE_CLOSE_MS reads `a.circuit_closed_at`; LEASES reads
 * `a.max_in_flight`, `e.ms` (SINCE_CLOSE_MS), `$3` (prefetch) and `$4` (the ramp, ms); BUDGET
 * (slowStartBudget; NULL: no bound, which least() ignores) reads `e.ms`, `$4` and `$5` (the rate
 * at the ramp's end, per second), in the same float8 operations, in the same order, as the plan.
 */
export const SINCE_CLOSE_MS = `extract(epoch FROM now() - a.circuit_closed_at) * 1000 + 1`;
export const LEASES = `CASE
                   WHEN a.circuit_closed_at IS NULL OR $4::int <= 0 OR a.max_in_flight <= 1 OR e.ms >= $4::int THEN a.max_in_flight * $3
                   WHEN e.ms <= 0 THEN 1
                   ELSE least(a.max_in_flight, 1 + floor((a.max_in_flight - 1) * e.ms / $4::int))::int
                 END`;
export const BUDGET = `CASE
                   WHEN a.circuit_closed_at IS NULL OR $4::int <= 0 OR $5::float8 <= 0 OR e.ms >= $4::int THEN NULL
                   WHEN e.ms <= 0 THEN 1
                   ELSE (1 + floor($5::float8 * e.ms::float8 * (2 * $4::float8 + e.ms::float8) / (4000 * $4::float8)))::bigint
                 END`;

export const CLAIM_CANDIDATES_SQL = `WITH RECURSIVE ready AS (
               (SELECT account_id, run_at FROM job_state WHERE status = 'scheduled' ORDER BY account_id, run_at LIMIT 1)
               UNION ALL
               SELECT n.account_id, n.run_at FROM ready r
               CROSS JOIN LATERAL (
                 SELECT j.account_id, j.run_at FROM job_state j
                 WHERE j.status = 'scheduled' AND j.account_id > r.account_id
                 ORDER BY j.account_id, j.run_at LIMIT 1
               ) n
             )
             SELECT c.id, a.id AS "accountId", now() AS now
             FROM (
               SELECT w.id, w.free FROM (
                 SELECT u.id, u.free, sum(u.free) OVER (ORDER BY u.first_due, u.id ROWS UNBOUNDED PRECEDING) - u.free AS before
                 FROM (
                   SELECT a.id, r.run_at AS first_due,
                          CASE WHEN f.others > 0 THEN 0 ELSE least(s.leases - f.total, s.budget - a.slow_start_leased) END AS free
                   FROM ready r
                   JOIN accounts a ON a.id = r.account_id
                   CROSS JOIN LATERAL (
                     SELECT count(*) AS total, count(*) FILTER (WHERE x.lease_owner <> $2) AS others
                     FROM job_state x WHERE x.account_id = a.id AND x.status = 'in_progress'
                   ) f
                   CROSS JOIN LATERAL (
                     SELECT ${SINCE_CLOSE_MS} AS ms
                   ) e
                   CROSS JOIN LATERAL (
                     SELECT ${LEASES} AS leases, ${BUDGET} AS budget
                   ) s
                   WHERE r.run_at <= now() AND a.status = 'active' AND a.deleted_at IS NULL
                     AND (a.circuit_state = 'closed' OR a.circuit_open_until <= now())
                 ) u
                 WHERE u.free > 0
               ) w
               WHERE w.before < 2 * $1
             ) a
             CROSS JOIN LATERAL (
               SELECT j.job_id AS id, j.run_at FROM job_state j
               WHERE (j.account_id, j.run_at) BETWEEN (a.id, '-infinity') AND (a.id, now()) AND j.status = 'scheduled'
                 AND (j.publish_by IS NULL OR j.publish_by >= now())
               ORDER BY j.account_id, j.run_at
               LIMIT greatest(a.free, 0)
               FOR UPDATE SKIP LOCKED
             ) c
             WHERE a.free > 0
             ORDER BY c.run_at
             LIMIT $1`;

export function claimCandidates(
  tx: Tx,
  limit: number,
  owner: string,
  prefetch: number,
  slowStart: SlowStart,
): Promise<(Candidate & { now: Date })[]> {
  return tx.prepared<Candidate & { now: Date }>('herald_claim_candidates', CLAIM_CANDIDATES_SQL, [
    limit,
    owner,
    prefetch,
    slowStart.rampMs,
    slowStart.ratePerS,
  ]);
}
