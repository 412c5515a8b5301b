import type { Tx } from '../../database/db';
import { guard } from '../job-lifecycle';
import { preparedWithoutNestedLoops } from './without-nested-loops';

/**
 * expireLeased (in_progress → dead, expired): a leased job whose publishBy passed before its
 * attempt could start (it waited in the worker behind its account's running attempts). The
 * contract: dead as `expired`, without an attempt — so no attempt row, and the claim's attempt
 * number is given back. The last error says when the deadline was. Guarded by the lease.
 */
const SQL = `UPDATE job_state j SET status = 'dead', dead_reason = 'expired', finished_at = now(), updated_at = now(),
                    lease_owner = NULL, lease_expires_at = NULL, attempt_count = j.attempt_count - 1,
                    last_error = 'publishBy (' || to_char(j.publish_by AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ') passed before the job could be published'
             FROM unnest($2::uuid[], $3::int[]) AS r(id, number)
             WHERE j.job_id = r.id AND ${guard('expireLeased', 'j.status')} AND j.lease_owner = $1 AND j.attempt_count = r.number`;

export async function expireLeasedJobs(tx: Tx, owner: string, jobs: { id: string; attemptNumber: number }[]): Promise<void> {
  if (jobs.length === 0) return;
  await preparedWithoutNestedLoops(tx, 'herald_expire_leased', SQL, [owner, jobs.map((j) => j.id), jobs.map((j) => j.attemptNumber)]);
}
