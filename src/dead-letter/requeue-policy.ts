import type { AccountForRequeue } from '../account-state/account-state';
import type { JobStatus } from '../queue/job-lifecycle';

/** Where a requeued job goes, or why it may not go back. */
export type RequeueTarget =
  { ok: true; status: 'scheduled' | 'paused' } | { ok: false; reason: 'account_deleted' | 'account_not_active'; message: string };

/**
 * Decides where a dead job goes back to, from its account. Pure.
 * - Active account: `scheduled`.
 * - needs_reauth / disabled: refused, with what to fix. With `force`, the job goes back as
 *   `paused`: the claim never takes a job of an account that is not active, and `paused` is
 *   the state that PATCH /v1/accounts/:id resumes when the account is fixed (or that expires
 *   at its publishBy), so a forced requeue waits visibly instead of sitting in the queue.
 * - Deleted account: always refused; nothing could deliver it.
 */
export function requeueTarget(account: AccountForRequeue, force: boolean): RequeueTarget {
  const name = JSON.stringify(account.name);
  if (account.deleted) {
    return {
      ok: false,
      reason: 'account_deleted',
      message: `account ${name} was deleted, so this job can no longer be delivered: discard it (DELETE /v1/dlq/:jobId)`,
    };
  }
  if (account.status === 'active') return { ok: true, status: 'scheduled' };
  if (force) return { ok: true, status: 'paused' };
  const why = account.statusReason ? ` (${account.statusReason})` : '';
  const fix =
    account.status === 'needs_reauth'
      ? `re-authenticate it first: PATCH /v1/accounts/${account.id} with its new (or re-entered) credentials in "config"`
      : `enable it first: PATCH /v1/accounts/${account.id} { "status": "active" }`;
  return {
    ok: false,
    reason: 'account_not_active',
    message:
      `account ${name} ${account.status === 'needs_reauth' ? 'needs re-authentication' : 'is disabled'}${why}: ${fix}; ` +
      `or requeue with { "force": true } to let the job wait, paused, until the account is fixed`,
  };
}

/** Why a job that is not dead was not requeued (nothing changed). */
export function notDeadMessage(status: JobStatus): string {
  switch (status) {
    case 'scheduled':
    case 'in_progress':
    case 'paused':
      return `this job is no longer in the dead-letter queue (it is ${status}): it was already requeued or retried, so nothing was changed`;
    case 'succeeded':
      return 'this job was already published; requeuing it would publish it twice';
    case 'cancelled':
      return 'this job was cancelled (its post or account was removed); it cannot be requeued';
    case 'discarded':
      return 'this job was discarded from the dead-letter queue; it cannot be requeued (POST /v1/jobs/:id/retry does not take it either)';
    case 'dead':
      return 'this job is dead';
  }
}
