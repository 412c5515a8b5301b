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
const SQL = `UPDATE job_state j SET status = 'paused', updated_at = now()
             WHERE j.account_id = ANY($1::uuid[]) AND ${guard('pause', 'j.status')}
               AND (NOT $2::boolean OR EXISTS (SELECT 1 FROM accounts a WHERE a.id = j.account_id AND a.status <> 'active'))
             RETURNING j.job_id`;

export async function pauseAccountJobs(q: Sql, accountIds: string[], onlyIfInactive: boolean): Promise<number> {
  if (accountIds.length === 0) return 0;
  return (await q.query(SQL, [accountIds, onlyIfInactive])).length;
}

/**
 * pause, as a sweep (every poll interval, queue maintenance): waiting jobs of accounts that are
 * not active. The round pauses an account's waiting jobs right after the commit that made it
 * inactive, but a post accepted in that instant (its intake read the account as active a moment
 * before) can commit its job as `scheduled` after that pause ran: the claim skips the account,
 * so the job would wait as "scheduled" instead of "paused" until a person fixed the account.
 * This finds those.
 *
 * The accounts are locked FOR SHARE (SKIP LOCKED): while the sweep runs, a person's enable or
 * reconnect (which resumes the account's paused jobs in its own transaction) waits for it, so it
 * sees and resumes what the sweep paused; one that committed first is seen here as active. The
 * jobs are locked SKIP LOCKED too: the sweep never waits on anything, so it cannot deadlock with
 * a person's disable (jobs, then the account) or a cancel; what it skips, the next sweep sees.
 */
const STRAGGLERS_SQL = `WITH inactive AS (
               SELECT a.id FROM accounts a
               WHERE a.status <> 'active'
                 AND EXISTS (SELECT 1 FROM job_state x WHERE x.account_id = a.id AND x.status = 'scheduled')
               FOR SHARE OF a SKIP LOCKED
             )
             UPDATE job_state j SET status = 'paused', updated_at = now()
             WHERE j.job_id IN (
               SELECT x.job_id FROM job_state x
               WHERE x.account_id IN (SELECT id FROM inactive) AND ${guard('pause', 'x.status')}
               FOR UPDATE OF x SKIP LOCKED)
             RETURNING j.job_id`;

export async function pauseStragglers(q: Sql): Promise<number> {
  return (await q.query(STRAGGLERS_SQL, [])).length;
}
