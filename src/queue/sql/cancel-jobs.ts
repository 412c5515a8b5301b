import type { Sql } from '../../database/db';
import { guard } from '../job-lifecycle';

/**
 * cancel (scheduled | paused → cancelled): the jobs of a deleted post or account that have not
 * started (waiting for their time or a retry, or paused). An attempt in flight finishes and is
 * recorded; finished jobs stay as they are. A leased job that has not started goes back as
 * cancelled when its worker releases it (release-jobs.ts reads the account's deletion).
 */
const BY_POST = `UPDATE job_state SET status = 'cancelled', finished_at = now(), updated_at = now()
                 WHERE workspace_id = $1 AND job_id IN (SELECT id FROM job_payloads WHERE post_id = $2) AND ${guard('cancel')}
                 RETURNING job_id`;
const BY_ACCOUNT = `UPDATE job_state SET status = 'cancelled', finished_at = now(), updated_at = now()
                    WHERE workspace_id = $1 AND account_id = $2 AND ${guard('cancel')} RETURNING job_id`;

export async function cancelPostJobs(q: Sql, workspaceId: string, postId: string): Promise<number> {
  return (await q.query(BY_POST, [workspaceId, postId])).length;
}

export async function cancelAccountJobs(q: Sql, workspaceId: string, accountId: string): Promise<number> {
  return (await q.query(BY_ACCOUNT, [workspaceId, accountId])).length;
}
