import type { Tx } from '../../database/db';
import { guard } from '../job-lifecycle';
import { preparedWithoutNestedLoops } from './without-nested-loops';

/**
 * release (in_progress → scheduled | paused | cancelled): leased jobs this worker gives back
 * without attempting them (after a failure of their account, when the account stopped, at
 * shutdown, or when their lease could not be kept). The claim's attempt number is returned
 * (attempt_count − 1): no attempt was spent.
 *
 * Where the job lands follows its account's state at this moment: the queue (active), paused
 * (needs_reauth or disabled: resumed when fixed) or cancelled (the account was deleted while
 * the job was leased). Guarded by the lease (owner and attempt number), like record.
 */
const SQL = `UPDATE job_state j SET
                    status = CASE WHEN a.deleted_at IS NOT NULL THEN 'cancelled'
                                  WHEN a.status <> 'active' THEN 'paused' ELSE 'scheduled' END,
                    finished_at = CASE WHEN a.deleted_at IS NOT NULL THEN now() END,
                    lease_owner = NULL, lease_expires_at = NULL,
                    attempt_count = j.attempt_count - 1, updated_at = now()
             FROM unnest($2::uuid[], $3::int[]) AS r(id, number), accounts a
             WHERE j.job_id = r.id AND a.id = j.account_id
               AND ${guard('release', 'j.status')} AND j.lease_owner = $1 AND j.attempt_count = r.number`;

export async function releaseJobs(tx: Tx, owner: string, jobs: { id: string; attemptNumber: number }[]): Promise<void> {
  if (jobs.length === 0) return;
  await preparedWithoutNestedLoops(tx, 'herald_release', SQL, [owner, jobs.map((j) => j.id), jobs.map((j) => j.attemptNumber)]);
}
