import type { Sql } from '../../database/db';
import { guard } from '../job-lifecycle';

/**
 * discard (dead → discarded): dropped from the dead-letter queue, kept with its dead reason and
 * history for the audit trail. Guarded by its status: false when the job is no longer dead.
 */
const SQL = `UPDATE job_state SET status = 'discarded', updated_at = now() WHERE job_id = $1 AND ${guard('discard')} RETURNING job_id`;

export async function discardDeadJob(q: Sql, id: string): Promise<boolean> {
  return (await q.query(SQL, [id])).length > 0;
}
