import { Injectable } from '@nestjs/common';
import { Db, Sql, Tx } from '../database/db';
import type { AttemptRow, JobRow } from './job.types';

export const JOB_COLUMNS = `
  j.id, j.post_id AS "postId", j.account_id AS "accountId", j.workspace_id AS "workspaceId", j.provider, j.status,
  j.run_at AS "runAt", j.attempt_count AS "attemptCount", j.attempt_base AS "attemptBase",
  j.idempotency_key AS "idempotencyKey", j.text_override AS "textOverride", j.payload,
  j.error_class AS "errorClass", j.last_error AS "lastError", j.dead_reason AS "deadReason",
  j.remote_id AS "remoteId", j.remote_url AS "remoteUrl", j.created_at AS "createdAt", j.updated_at AS "updatedAt",
  j.finished_at AS "finishedAt"`;

/**
 * The idempotency key a dead job goes back to the queue with: a new one iff its payload was
 * edited (PATCH /v1/dlq/:jobId) since the current key was issued, else the same (SPEC §4).
 * New keys are `<jobId>.<n>`, n = 2, 3, … (a job's first key is its id): unique because job
 * ids are, readable in a receiver's logs, and within Bluesky's record-key alphabet. Used by
 * every requeue (DLQ single and bulk, and the manual retry below) and by the DLQ's detail
 * view, which announces the key a requeue would send.
 */
export const REQUEUE_KEY_SQL = `CASE WHEN j.payload_changed_since_key
  THEN j.id::text || '.' || (coalesce(substring(j.idempotency_key from '\\.(\\d+)$')::int, 1) + 1)
  ELSE j.idempotency_key END`;

/** Reads of jobs and attempts for the API, and the guarded manual retry. Scoped by workspace. */
@Injectable()
export class JobsRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async find(workspaceId: string, id: string, m?: Sql): Promise<JobRow | null> {
    const rows: JobRow[] = await (m ?? this.db).query(
      `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.workspace_id = $1 AND j.id = $2`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  forPosts(workspaceId: string, postIds: string[], m?: Sql): Promise<JobRow[]> {
    return (m ?? this.db).query(
      `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.workspace_id = $1 AND j.post_id = ANY($2::uuid[]) ORDER BY j.created_at, j.id`,
      [workspaceId, postIds],
    );
  }

  attempts(jobId: string): Promise<AttemptRow[]> {
    return this.db.query(
      `SELECT number, started_at AS "startedAt", finished_at AS "finishedAt", http_status AS "httpStatus",
              network_error AS "networkError", error_class AS "errorClass", decision, retry_at AS "retryAt",
              latency_ms AS "latencyMs", response_excerpt AS "responseExcerpt", message, idempotency_key AS "idempotencyKey", warnings
       FROM attempts WHERE job_id = $1 ORDER BY number`,
      [jobId],
    );
  }

  /**
   * Per account, its latest failed attempt and its latest attempt refused for credentials (the
   * settings page's "last error at …" and "needs re-authentication since …"; the accounts row
   * keeps the last error's text but not its time). Attempts have no account column: they are
   * reached through the account's jobs.
   */
  async latestFailures(
    workspaceId: string,
    accountIds: string[],
  ): Promise<{ accountId: string; at: Date; errorClass: string; message: string | null; lastAuthAt: Date | null }[]> {
    if (accountIds.length === 0) return [];
    return this.db.query(
      `SELECT DISTINCT ON (j.account_id) j.account_id AS "accountId", a.finished_at AS "at", a.error_class AS "errorClass", a.message,
              max(a.finished_at) FILTER (WHERE a.error_class = 'auth') OVER (PARTITION BY j.account_id) AS "lastAuthAt"
       FROM attempts a JOIN jobs j ON j.id = a.job_id
       WHERE j.workspace_id = $1 AND j.account_id = ANY($2::uuid[]) AND a.error_class <> 'success'
       ORDER BY j.account_id, a.finished_at DESC, a.id DESC`,
      [workspaceId, accountIds],
    );
  }

  /** Per account, how many of its jobs wait (scheduled, paused), run, or are dead. */
  async countsByAccount(
    workspaceId: string,
    accountIds: string[],
  ): Promise<{ accountId: string; scheduled: number; paused: number; inProgress: number; dead: number }[]> {
    if (accountIds.length === 0) return [];
    return this.db.query(
      `SELECT account_id AS "accountId",
              count(*) FILTER (WHERE status = 'scheduled')::int AS scheduled,
              count(*) FILTER (WHERE status = 'paused')::int AS paused,
              count(*) FILTER (WHERE status = 'in_progress')::int AS "inProgress",
              count(*) FILTER (WHERE status = 'dead')::int AS dead
       FROM jobs
       WHERE workspace_id = $1 AND account_id = ANY($2::uuid[]) AND status IN ('scheduled', 'paused', 'in_progress', 'dead')
       GROUP BY account_id`,
      [workspaceId, accountIds],
    );
  }

  /**
   * "Retry now" for a job that waits for a retry or is dead: due now; a dead job gets a fresh
   * attempt budget (history kept). Guarded by its status, so it cannot race a worker: an
   * in-flight job is not matched (the caller answers 409). A job whose account is not active
   * waits as `paused` instead of sitting unclaimable in the queue.
   */
  async retryNow(workspaceId: string, id: string, m: Sql): Promise<boolean> {
    const rows: unknown[] = await m.query(
      `UPDATE jobs j SET
         status = CASE WHEN a.status = 'active' THEN 'scheduled' ELSE 'paused' END,
         run_at = now(),
         attempt_base = CASE WHEN j.status = 'dead' THEN j.attempt_count ELSE j.attempt_base END,
         -- A dead job edited in the DLQ must not go out under the key its old payload used.
         idempotency_key = CASE WHEN j.status = 'dead' THEN ${REQUEUE_KEY_SQL} ELSE j.idempotency_key END,
         payload_changed_since_key = CASE WHEN j.status = 'dead' THEN false ELSE j.payload_changed_since_key END,
         dead_reason = NULL, finished_at = NULL, updated_at = now()
       FROM accounts a
       WHERE j.workspace_id = $1 AND j.id = $2 AND a.id = j.account_id AND a.deleted_at IS NULL
         AND j.status IN ('scheduled', 'dead')
       RETURNING j.id`,
      [workspaceId, id],
    );
    return rows.length > 0;
  }
}
