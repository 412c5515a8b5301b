import type { Sql } from '../../database/db';
import { guard } from '../job-lifecycle';

/**
 * resume (paused → scheduled): an account is active again (a person re-entered its credentials
 * or enabled it): its paused jobs go back to the queue. The caller sends the wake-up in
 * the same transaction (delivered at commit). By account, or by job for the round's stale-auth
 * case (a job paused by a refusal of credentials that a person had already replaced).
 */
// run_at is kept: a job paused before its time still waits for it (the others are due already).
const BY_ACCOUNT = `UPDATE job_state SET status = 'scheduled', updated_at = now()
                    WHERE account_id = $1 AND ${guard('resume')} RETURNING job_id`;
const BY_JOB = `UPDATE job_state SET status = 'scheduled', run_at = now(), updated_at = now()
                WHERE job_id = ANY($1::uuid[]) AND ${guard('resume')} RETURNING job_id`;

export async function resumeAccountJobs(q: Sql, accountId: string): Promise<number> {
  return (await q.query(BY_ACCOUNT, [accountId])).length;
}

export async function resumeJobs(q: Sql, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  return (await q.query(BY_JOB, [ids])).length;
}
