import type { Tx } from '../../database/db';
import { guard } from '../job-lifecycle';
import type { FinishedAttempt } from '../queue.types';

/**
 * recordLate (any state but succeeded → succeeded; succeeded → succeeded, history only): a
 * success whose lease was lost before it could be recorded.
 *
 * It happens when the worker could not reach the database for longer than a lease (leases are
 * renewed every third of WORKER_LEASE_MS while an attempt runs, so nothing else lets one lapse):
 * meanwhile another process reclaimed the job, which then waits for a retry, runs again, or died
 * as max_attempts. The post did go out, so the truth is `succeeded` with this remote id — not
 * dead, and not sent again by a person requeuing it. A job already succeeded keeps its first
 * remote id.
 *
 * The attempt row cannot take the attempt's own number when the reclaim already wrote a
 * `worker_lost` row under it (attempt rows are immutable), so it gets the next free number and
 * says what it is; attempt_count follows, so the numbers stay unique and a worker that holds a
 * newer lease on the job finds its lease guard failing and keeps its own outcome through here
 * too. Rare by construction: a separate statement, sent only when a round has such outcomes.
 */
const SQL = `WITH r AS (
               SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::int[],
                                    $7::text[], $8::text[], $9::text[], $10::jsonb[])
                 AS r(job_id, number, idempotency_key, started_at, finished_at, http_status, remote_id, remote_url, worker, parts)
             ), moved AS (
               UPDATE job_state j SET
                 status = 'succeeded', error_class = 'success', last_error = NULL, dead_reason = NULL,
                 last_http_status = r.http_status, last_network_error = NULL,
                 remote_id = coalesce(j.remote_id, r.remote_id), remote_url = coalesce(j.remote_url, r.remote_url),
                 parts = CASE WHEN jsonb_array_length(coalesce(r.parts, '[]')) > jsonb_array_length(j.parts) THEN r.parts ELSE j.parts END,
                 lease_owner = NULL, lease_expires_at = NULL, finished_at = coalesce(j.finished_at, now()),
                 attempt_count = greatest(j.attempt_count, (SELECT coalesce(max(a.number), 0) FROM attempts a WHERE a.job_id = j.job_id)) + 1,
                 updated_at = now()
               FROM r
               WHERE j.job_id = r.job_id AND (${guard('recordLate', 'j.status')})
               RETURNING j.job_id AS id, j.attempt_count
             )
             INSERT INTO attempts (job_id, number, started_at, finished_at, http_status, error_class, decision, latency_ms,
                                   message, idempotency_key, worker)
             SELECT r.job_id, m.attempt_count, r.started_at, r.finished_at, r.http_status, 'success', 'succeed',
                    greatest(0, (extract(epoch FROM r.finished_at - r.started_at) * 1000)::int),
                    'attempt ' || r.number || ' succeeded after its lease was lost (the worker could not reach the database in time); recorded late',
                    r.idempotency_key, r.worker
             FROM r JOIN moved m ON m.id = r.job_id
             RETURNING job_id AS "jobId"`;

export async function recordLateSuccesses(tx: Tx, owner: string, attempts: FinishedAttempt[]): Promise<Set<string>> {
  if (attempts.length === 0) return new Set();
  const rows = await tx.prepared<{ jobId: string }>('herald_record_late_successes', SQL, [
    attempts.map((a) => a.jobId),
    attempts.map((a) => a.attemptNumber),
    attempts.map((a) => a.idempotencyKey),
    attempts.map((a) => a.startedAt),
    attempts.map((a) => a.finishedAt),
    attempts.map((a) => a.httpStatus),
    attempts.map((a) => a.remoteId),
    attempts.map((a) => a.remoteUrl),
    attempts.map(() => owner),
    attempts.map((a) => (a.parts === null ? null : JSON.stringify(a.parts))),
  ]);
  return new Set(rows.map((r) => r.jobId));
}
