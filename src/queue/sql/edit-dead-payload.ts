import type { Sql } from '../../database/db';
import type { JobPayload } from '../../connectors/connector.interface';
import { guard } from '../job-lifecycle';

/**
 * edit (dead → dead): a person corrected a dead job's payload in the dead-letter queue (already
 * validated by the caller as POST /v1/posts would). Marks the payload as changed since the
 * current idempotency key was issued, so the revival sends it under a new key. Guarded by its
 * status: false when the job is no longer dead.
 */
const SQL = `WITH s AS (
               UPDATE job_state SET updated_at = now() WHERE job_id = $1 AND ${guard('edit')} RETURNING job_id
             )
             UPDATE job_payloads p SET payload = $2, payload_edited_at = now(), payload_changed_since_key = true
             FROM s WHERE p.id = s.job_id RETURNING p.id`;

export async function editDeadPayload(q: Sql, id: string, payload: JobPayload): Promise<boolean> {
  return (await q.query(SQL, [id, JSON.stringify(payload)])).length > 0;
}
