import type { Sql } from '../../database/db';
import { guard } from '../job-lifecycle';

/**
 * pause (scheduled → paused): the waiting jobs of accounts that cannot take attempts any more
 * (needs_reauth or disabled). Paused jobs are not claimable and say why they wait; they resume
 * when the account is fixed, or expire at their publishBy.
 *
 * `onlyIfInactive`: the worker's round pauses after its own commit (jobs before accounts: the
 * round locks accounts after jobs, so it cannot pause jobs it did not lock first); the account
 * may have been re-enabled in between, so it re-checks the account's status here. A person's
 * disable runs it inside the same transaction as the account change, before it (the lock order).
 */
const SQL = `UPDATE jobs j SET status = 'paused', updated_at = now()
             WHERE j.account_id = ANY($1::uuid[]) AND ${guard('pause', 'j.status')}
               AND (NOT $2::boolean OR EXISTS (SELECT 1 FROM accounts a WHERE a.id = j.account_id AND a.status <> 'active'))
             RETURNING j.id`;

export async function pauseAccountJobs(q: Sql, accountIds: string[], onlyIfInactive: boolean): Promise<number> {
  if (accountIds.length === 0) return 0;
  return (await q.query(SQL, [accountIds, onlyIfInactive])).length;
}
