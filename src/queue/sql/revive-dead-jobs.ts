import type { Sql } from '../../database/db';
import { pairs } from '../job-lifecycle';
import { REVIVE_KEY_SQL } from './job-columns';

/**
 * retry | requeue (dead → scheduled | paused): THE rule for sending a dead job again, shared by
 * `POST /v1/jobs/:id/retry` and the dead-letter queue's requeues, so the two cannot drift apart
 * again (they did: the retry kept a passed publishBy, and an `expired` job it "retried" was
 * answered 200 and never delivered — the claim skips it and the sweep killed it again).
 *
 * - a fresh attempt budget: attempt_base = attempt_count (the history stays);
 * - the idempotency key of REVIVE_KEY_SQL;
 * - due at `runAt` (default: the database's now, the clock the claim compares with);
 * - a publishBy not after that run time is dropped: sending a dead job again is a person's
 *   explicit decision to publish after that deadline (the DLQ's audit trail keeps the old one);
 * - the dead reason cleared (error_class and last_error stay: they describe the last attempt).
 *
 * Where each job goes (scheduled, or paused for an account that is not active) is the caller's
 * decision, taken under the account's lock; the target is checked twice against the lifecycle
 * table: JobLifecycle.revive refuses a move the table does not list before any SQL runs, and
 * the statement's guard is the table's (from, to) pairs (`pairs('requeue', …)`: dead → scheduled
 * or paused), so no caller can make a job anything else. Guarded by its status, on top of the
 * caller's row locks: of two concurrent revivals exactly one moves the job, and a job in flight
 * (never dead) is never put in the queue a second time.
 */
const SQL = `WITH moved AS (
         UPDATE job_state s SET
           status = r.status,
           run_at = coalesce($3::timestamptz, now()),
           attempt_base = s.attempt_count,
           dead_reason = NULL,
           finished_at = NULL,
           publish_by = CASE WHEN s.publish_by <= coalesce($3::timestamptz, now()) THEN NULL ELSE s.publish_by END,
           updated_at = now()
         FROM unnest($1::uuid[], $2::text[]) AS r(id, status)
         WHERE s.job_id = r.id AND ${pairs('requeue', 's.status', 'r.status')}
         RETURNING s.job_id, s.account_id, s.status, s.run_at, s.publish_by
       )
       UPDATE job_payloads j SET idempotency_key = ${REVIVE_KEY_SQL}, payload_changed_since_key = false
       FROM moved m WHERE j.id = m.job_id
       RETURNING j.id, m.account_id AS "accountId", m.status, j.idempotency_key AS "idempotencyKey", m.run_at AS "runAt",
                 m.publish_by AS "publishBy"`;

/** Where a revived job goes (the table's targets of retry and requeue from dead). */
export type ReviveTarget = 'scheduled' | 'paused';

export interface RevivedJob {
  id: string;
  accountId: string;
  status: ReviveTarget;
  idempotencyKey: string;
  runAt: Date;
  publishBy: Date | null;
}

export function reviveDeadJobs(q: Sql, jobs: { id: string; status: ReviveTarget }[], runAt: Date | null): Promise<RevivedJob[]> {
  if (jobs.length === 0) return Promise.resolve([]);
  return q.query<RevivedJob>(SQL, [jobs.map((j) => j.id), jobs.map((j) => j.status), runAt]);
}
