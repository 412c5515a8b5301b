import type { Sql } from '../../database/db';
import { guard } from '../job-lifecycle';

/**
 * withdraw: the jobs of a post that goes back to waiting for approval (an edit of an approved
 * post that has not started), deleted rather than moved to a state: a post waiting for approval
 * has no jobs, and approving it again writes new ones. Only jobs that never started can go: the
 * `cancel` guard's states (waiting for their time, or paused) and no attempt ever made. The
 * caller holds every job's lock (lockPostJobs) and has checked that none started, so this deletes
 * them all or the caller's check was wrong: it returns how many went, for the caller to compare.
 * job_state and attempts go with job_payloads (ON DELETE CASCADE).
 */
const WITHDRAW = `DELETE FROM job_payloads WHERE post_id = $2 AND id IN (
                    SELECT job_id FROM job_state WHERE workspace_id = $1 AND attempt_count = 0 AND ${guard('cancel')})
                  RETURNING id`;

export async function withdrawPostJobs(q: Sql, workspaceId: string, postId: string): Promise<number> {
  return (await q.query(WITHDRAW, [workspaceId, postId])).length;
}
