import { BreakerConfig, recordOutcome } from '../retry/circuit-breaker';
import type { AccountFeedback, LockedAccount } from '../account-state/account-state';
import type { FinishedAttempt } from '../queue/queue.types';

/**
 * What a batch of finished attempts does to their accounts (docs/delivery.md), folded in the order the
 * attempts finished: the circuit breaker steps once per attempt; an auth failure makes the
 * account `needs_reauth`; reaching the disable threshold makes it `disabled`. An account that
 * is already not active keeps its status (a person must act on it anyway).
 *
 * An auth failure of credentials older than the account's current ones (a person saved new ones
 * while the attempt ran) says nothing about the account any more: it is left out, so the
 * person's fresh credentials are not marked as refused.
 *
 * `random` jitters the cooldown of a circuit that opens (circuit-breaker.ts jitteredCooldownMs).
 */
export function accountFeedback(
  accounts: LockedAccount[],
  attempts: FinishedAttempt[],
  breaker: BreakerConfig,
  random: () => number = () => 0,
): Map<string, AccountFeedback> {
  const ordered = [...attempts].sort((a, b) => a.finishedAt.getTime() - b.finishedAt.getTime());
  const byAccount = new Map<string, FinishedAttempt[]>();
  const current = new Map(accounts.map((a) => [a.id, a.credentialsVersion]));
  for (const attempt of ordered) {
    if (attempt.errorClass === 'auth' && attempt.credentialsVersion !== current.get(attempt.accountId)) continue;
    const list = byAccount.get(attempt.accountId);
    if (list) list.push(attempt);
    else byAccount.set(attempt.accountId, [attempt]);
  }
  const result = new Map<string, AccountFeedback>();
  for (const account of accounts) {
    let circuit = account.circuit;
    let opened = false;
    let closed = false;
    let disable = false;
    let auth: string | null = null;
    let lastError: string | null = null;
    let succeeded = false;
    for (const attempt of byAccount.get(account.id) ?? []) {
      const step = recordOutcome(circuit, attempt.errorClass, attempt.finishedAt, breaker, random);
      // Closed after an outage (open or half-open → closed); opened again later in the batch: not closed.
      if (step.next.state === 'closed' && circuit.state !== 'closed') closed = true;
      else if (step.next.state !== 'closed') closed = false;
      circuit = step.next;
      opened ||= step.opened;
      disable ||= step.disable;
      if (attempt.errorClass === 'success') succeeded = true;
      else lastError = attempt.message;
      if (attempt.errorClass === 'auth') auth = attempt.message;
    }
    let status: AccountFeedback['status'] = null;
    if (account.status === 'active') {
      if (auth !== null) {
        status = { value: 'needs_reauth', reason: `the platform refused the credentials: ${auth ?? 'authentication failed'}` };
      } else if (disable) {
        status = {
          value: 'disabled',
          reason: `disabled automatically after ${circuit.consecutiveFailures} consecutive failed attempts; enable it when the receiver works again`,
        };
      }
    }
    result.set(account.id, { circuit, opened, closed, lastError, succeeded, status });
  }
  return result;
}
