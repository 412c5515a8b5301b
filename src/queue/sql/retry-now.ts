import type { Sql } from '../../database/db';
import { guardFrom } from '../job-lifecycle';

/**
 * retry (scheduled → scheduled): "retry now" of a job waiting for its next attempt: due now,
 * nothing else changes (its budget, key and publishBy stay). A dead job takes the revive rule
 * instead (revive-dead-jobs.ts). Guarded by its status: false when it is not waiting.
 */
const SQL = `UPDATE job_state SET run_at = now(), updated_at = now()
             WHERE workspace_id = $1 AND job_id = $2 AND ${guardFrom('retry', 'scheduled')} RETURNING job_id`;

export async function retryNow(q: Sql, workspaceId: string, id: string): Promise<boolean> {
  return (await q.query(SQL, [workspaceId, id])).length > 0;
}
