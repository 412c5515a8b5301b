import type { Sql } from '../../database/db';
import type { JobPayload, Provider, PublishedPart } from '../../connectors/connector.interface';
import type { JobStatus } from '../job-lifecycle';

/**
 * The row locks a person's change of jobs takes before it decides anything (requeue, retry,
 * discard, edit, a post's edit or cancel): FOR UPDATE, in id order, so two such changes lock in
 * the same order and cannot deadlock, and always before any account row (Herald's lock order,
 * the worker round's too). Every lock is scoped by workspace.
 */

export interface LockedJob {
  id: string;
  accountId: string;
  status: JobStatus;
  idempotencyKey: string;
  runAt: Date;
  publishBy: Date | null;
  payload: JobPayload;
  provider: Provider;
  attemptCount: number;
  /** A thread's parts already published (jobs.parts). */
  parts: PublishedPart[];
}

/** Both rows of a job are locked (FOR UPDATE): its state, and the payload an edit or a reschedule rewrites. */
const LOCKED = `j.job_id AS id, j.account_id AS "accountId", j.status, p.idempotency_key AS "idempotencyKey", j.run_at AS "runAt",
            j.publish_by AS "publishBy", p.payload, p.provider, j.attempt_count AS "attemptCount", j.parts`;

/**
 * The workspace's jobs among `ids` (any status: the caller reports why one cannot change).
 * `onlyDead`: dead ones only. A job another transaction is changing is waited for, and the
 * WHERE is evaluated again on its new version (PostgreSQL's re-check after a lock wait), so a
 * job requeued meanwhile drops out instead of being taken twice.
 */
export function lockJobs(m: Sql, workspaceId: string, ids: string[], onlyDead: boolean): Promise<LockedJob[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return m.query(
    `SELECT ${LOCKED} FROM job_state j JOIN job_payloads p ON p.id = j.job_id
     WHERE j.workspace_id = $1 AND j.job_id = ANY($2::uuid[]) AND (NOT $3::boolean OR j.status = 'dead')
     ORDER BY j.job_id FOR UPDATE`,
    [workspaceId, ids, onlyDead],
  );
}

/** Every job of a post, for its edit or cancel: whether any has started is decided under these locks. */
export function lockPostJobs(m: Sql, workspaceId: string, postId: string): Promise<LockedJob[]> {
  return m.query(
    `SELECT ${LOCKED} FROM job_state j JOIN job_payloads p ON p.id = j.job_id
     WHERE j.workspace_id = $1 AND p.post_id = $2 ORDER BY j.job_id FOR UPDATE`,
    [workspaceId, postId],
  );
}
