import type { Tx } from '../../database/db';
import { guard, RECORD_OUTCOMES, recordStatusCase } from '../job-lifecycle';
import type { FinishedAttempt } from '../queue.types';
import { preparedWithoutNestedLoops } from './without-nested-loops';

/**
 * record (in_progress → succeeded | scheduled | paused | dead): the attempts that finished, and
 * their attempt rows, in ONE statement for the whole batch (one array per column through unnest).
 *
 * Guarded by the lease: status in_progress, lease owner and attempt number. A worker whose lease
 * was lost and whose job was taken over cannot overwrite the newer owner's state, and its attempt
 * row is not written here (recordLateSuccesses keeps a late success; see JobStore.round).
 * The attempt row is inserted only for jobs the UPDATE moved (JOIN done), so a job's history
 * never shows an outcome its state does not reflect.
 *
 * Retry times use the database clock (clock_timestamp() + delay), the clock the claim compares
 * with; hosts' clocks may disagree.
 *
 * A thread's published parts (`parts`, success or not) replace the job's: the next attempt, or a
 * requeue, starts after them (docs/api.md "Threads").
 *
 * The new status is one WHEN per outcome (RECORD_OUTCOMES, each a move of the lifecycle table)
 * and no ELSE: an outcome nobody listed is refused here before it is sent, and would be refused
 * by jobs.status NOT NULL if it got through — never a job made dead because its outcome was
 * not recognised.
 *
 * An auth failure pauses the job, unless a person saved new credentials while the attempt ran
 * (the account's credentials_version moved past the one the attempt used): then the refusal was
 * of the old credentials, and the job is retried now with the new ones. The scalar subquery runs
 * only for `pause` decisions (CASE evaluates lazily), so the common path reads no account row.
 * (The round re-checks under the account lock, for a save that lands between this statement and
 * that lock.)
 */
const SQL = `WITH r0 AS (
               SELECT * FROM unnest($2::uuid[], $3::int[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::int[],
                                    $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[], $14::text[],
                                    $15::text[], $16::text[], $17::text[], $18::uuid[], $19::int[], $20::jsonb[])
                 AS r(job_id, number, idempotency_key, started_at, finished_at, http_status, network_error, error_class,
                      message, response_excerpt, decision, delay_ms, dead_reason, remote_id, remote_url, warnings,
                      account_id, credentials_version, parts)
             ), r AS (
               SELECT r0.*, CASE
                   WHEN r0.decision = 'pause'
                    AND (SELECT a.credentials_version FROM accounts a WHERE a.id = r0.account_id) <> r0.credentials_version
                   THEN 'retry' ELSE r0.decision END AS applied
               FROM r0
             ), done AS (
               UPDATE job_state j SET
                 status = ${recordStatusCase('r.applied')},
                 run_at = CASE WHEN r.applied = 'retry'
                               THEN clock_timestamp() + coalesce(r.delay_ms, 0) * interval '1 millisecond' ELSE j.run_at END,
                 error_class = r.error_class,
                 last_error = r.message,
                 last_http_status = r.http_status,
                 last_network_error = r.network_error,
                 dead_reason = r.dead_reason,
                 remote_id = coalesce(r.remote_id, j.remote_id),
                 remote_url = coalesce(r.remote_url, j.remote_url),
                 parts = coalesce(r.parts, j.parts),
                 lease_owner = NULL, lease_expires_at = NULL,
                 finished_at = CASE WHEN r.applied IN ('succeed', 'dead') THEN now() ELSE NULL END,
                 updated_at = now()
               FROM r
               WHERE j.job_id = r.job_id AND ${guard('record', 'j.status')} AND j.lease_owner = $1 AND j.attempt_count = r.number
               RETURNING j.job_id AS id, j.run_at
             )
             INSERT INTO attempts (job_id, number, started_at, finished_at, http_status, network_error, error_class, decision,
                                   retry_at, latency_ms, response_excerpt, message, idempotency_key, worker, warnings)
             SELECT r.job_id, r.number, r.started_at, r.finished_at, r.http_status, r.network_error, r.error_class, r.applied,
                    CASE WHEN r.applied = 'retry' THEN done.run_at END,
                    greatest(0, (extract(epoch FROM r.finished_at - r.started_at) * 1000)::int),
                    r.response_excerpt, r.message, r.idempotency_key, $1, r.warnings
             FROM r JOIN done ON done.id = r.job_id
             RETURNING job_id AS "jobId"`;

/** Returns the jobs whose outcome was recorded (the others had lost their lease). */
export async function recordAttempts(tx: Tx, owner: string, attempts: FinishedAttempt[]): Promise<Set<string>> {
  if (attempts.length === 0) return new Set();
  const unknown = attempts.filter((a) => !Object.hasOwn(RECORD_OUTCOMES, a.decision));
  if (unknown.length > 0) throw new Error(`record: unknown outcome ${JSON.stringify(unknown[0].decision)} of job ${unknown[0].jobId}`);
  const col = <K extends keyof FinishedAttempt>(k: K) => attempts.map((a) => a[k]);
  const written = await preparedWithoutNestedLoops<{ jobId: string }>(tx, 'herald_record_attempts', SQL, [
    owner,
    col('jobId'),
    col('attemptNumber'),
    col('idempotencyKey'),
    col('startedAt'),
    col('finishedAt'),
    col('httpStatus'),
    col('networkError'),
    col('errorClass'),
    col('message'),
    col('responseExcerpt'),
    col('decision'),
    col('delayMs'),
    col('deadReason'),
    col('remoteId'),
    col('remoteUrl'),
    attempts.map((a) => (a.warnings.length > 0 ? a.warnings.join('\n') : null)),
    col('accountId'),
    col('credentialsVersion'),
    attempts.map((a) => (a.parts === null ? null : JSON.stringify(a.parts))),
  ]);
  return new Set(written.map((w) => w.jobId));
}
