import { Injectable } from '@nestjs/common';
import { Db, Sql, Tx } from '../database/db';
import { JOB_COLUMNS } from '../queue/job-columns';
import type { AttemptRow, JobRow } from './job.types';

/** Reads of jobs and attempts for the API, and the locks of a manual retry. Scoped by workspace. Jobs change through the queue (JobLifecycle). */
@Injectable()
export class JobsRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async find(workspaceId: string, id: string, m?: Sql): Promise<JobRow | null> {
    const rows: JobRow[] = await (m ?? this.db).query(`SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.workspace_id = $1 AND j.id = $2`, [
      workspaceId,
      id,
    ]);
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
   * Posts of the workspace with a job that may still send media `mediaId`: waiting (scheduled,
   * paused), in flight, or dead (a person may requeue it). DELETE /v1/media/:id refuses while
   * there is one, naming them. A job's payload is the truth (a DLQ edit can change its media
   * apart from its post's), a thread's parts included. Drafts count too: they have no jobs yet,
   * and the post itself (its media, its thread) is what scheduling it will send. Reached through
   * the workspace's posts, so the cost follows the workspace's own volume; deleting media is rare.
   */
  postsNeedingMedia(workspaceId: string, mediaId: string, limit: number): Promise<{ postId: string }[]> {
    return this.db.query(
      `SELECT "postId" FROM (
         SELECT j.post_id AS "postId" FROM posts p JOIN jobs j ON j.post_id = p.id
         WHERE p.workspace_id = $1 AND j.status IN ('scheduled', 'paused', 'in_progress', 'dead')
           AND (j.payload->'media' ? $2
                OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(j.payload->'thread', '[]')) part WHERE part->'media' ? $2))
         UNION
         SELECT p.id FROM posts p
         WHERE p.workspace_id = $1 AND p.draft_targets IS NOT NULL
           AND (p.media ? $2
                OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(p.thread, '[]')) part WHERE part->'media' ? $2))
       ) needing
       ORDER BY 1 LIMIT $3`,
      [workspaceId, mediaId, limit],
    );
  }
}
