import type { Sql } from '../../database/db';
import { guard } from '../job-lifecycle';

/**
 * reclaim (in_progress → scheduled | dead): crash recovery. Jobs whose lease ran out (their
 * worker died, hung, or lost the database for a whole lease) go back to the queue, due now, with
 * an attempt row saying so; the lost attempt counts against the budget (a job that kills its
 * worker every time must not loop forever), so a job on its last attempt is dead (max_attempts).
 * If the lost attempt did succeed, its worker records it late (record-late-successes.ts).
 *
 * SKIP LOCKED: several processes may sweep at once without waiting on each other. The jobs this
 * process itself still holds (`held`) are never taken: its renewal may just be late (the event
 * loop was busy), and taking them would put a second attempt in flight next to its own.
 */
const SQL = `WITH expired AS (
         SELECT j.job_id AS id, j.lease_owner, j.lease_expires_at, j.attempt_count, p.idempotency_key,
                j.attempt_count - j.attempt_base >= coalesce((a.retry_policy->>'maxAttempts')::int, $1) AS exhausted
         FROM job_state j JOIN accounts a ON a.id = j.account_id JOIN job_payloads p ON p.id = j.job_id
         WHERE ${guard('reclaim', 'j.status')} AND j.lease_expires_at < now()
           AND NOT (j.lease_owner = $3 AND j.job_id = ANY($4::uuid[]))
         ORDER BY j.lease_expires_at
         LIMIT $2
         FOR UPDATE OF j SKIP LOCKED
       ), moved AS (
         UPDATE job_state j SET
           status = CASE WHEN e.exhausted THEN 'dead' ELSE 'scheduled' END,
           dead_reason = CASE WHEN e.exhausted THEN 'max_attempts' END,
           run_at = now(), lease_owner = NULL, lease_expires_at = NULL, error_class = 'transient',
           last_http_status = NULL, last_network_error = 'worker_lost',
           last_error = 'the worker running this attempt stopped before recording its outcome (lease expired)',
           finished_at = CASE WHEN e.exhausted THEN now() END, updated_at = now()
         FROM expired e WHERE j.job_id = e.id
         RETURNING j.job_id AS id
       )
       INSERT INTO attempts (job_id, number, started_at, finished_at, network_error, error_class, decision, retry_at,
                             latency_ms, message, idempotency_key, worker)
       SELECT e.id, e.attempt_count, e.lease_expires_at, now(), 'worker_lost', 'transient',
              CASE WHEN e.exhausted THEN 'dead' ELSE 'retry' END, CASE WHEN e.exhausted THEN NULL ELSE now() END,
              0, 'the worker running this attempt stopped before recording its outcome (lease expired)',
              e.idempotency_key, e.lease_owner
       FROM expired e JOIN moved m ON m.id = e.id
       ON CONFLICT (job_id, number) DO NOTHING
       RETURNING job_id`;

export async function reclaimExpiredLeases(
  q: Sql,
  input: { defaultMaxAttempts: number; owner: string; held: string[]; limit?: number },
): Promise<string[]> {
  const rows: { job_id: string }[] = await q.query(SQL, [input.defaultMaxAttempts, input.limit ?? 500, input.owner, input.held]);
  return rows.map((r) => r.job_id);
}
