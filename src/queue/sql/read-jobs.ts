import type { Sql } from '../../database/db';
import type { AttemptRow, JobRow } from '../job-reads.types';
import { JOB_COLUMNS } from './job-columns';

/**
 * A job and a post's jobs, as the API shows them (GET /v1/jobs/:id, GET /v1/posts…), scoped by
 * workspace. Read through the view `jobs` (one row per job: its payload and state rows joined
 * on job_state_pkey and job_payloads_pkey); a post's jobs through jobs_post_id_account_id_key.
 * No lock: a person's change of jobs locks them itself first (lock-jobs.ts).
 */
export async function findJob(q: Sql, workspaceId: string, id: string): Promise<JobRow | null> {
  const rows = await q.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.workspace_id = $1 AND j.id = $2`, [workspaceId, id]);
  return rows[0] ?? null;
}

/** The jobs of these posts in creation order (a post's jobs were written in id order, in one statement). */
export function jobsOfPosts(q: Sql, workspaceId: string, postIds: string[]): Promise<JobRow[]> {
  return q.query(
    `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.workspace_id = $1 AND j.post_id = ANY($2::uuid[]) ORDER BY j.created_at, j.id`,
    [workspaceId, postIds],
  );
}

/** A job's attempts, oldest first, over attempts' unique (job_id, number). The caller has checked the job is the workspace's. */
export function attemptsOfJob(q: Sql, jobId: string): Promise<AttemptRow[]> {
  return q.query(
    `SELECT number, started_at AS "startedAt", finished_at AS "finishedAt", http_status AS "httpStatus",
            network_error AS "networkError", error_class AS "errorClass", decision, retry_at AS "retryAt",
            latency_ms AS "latencyMs", response_excerpt AS "responseExcerpt", message, idempotency_key AS "idempotencyKey", warnings
     FROM attempts WHERE job_id = $1 ORDER BY number`,
    [jobId],
  );
}
