import { backoffDelayMs, RetryPolicy } from './backoff';
import { ErrorClass } from './error-class';
import { addMsClamped } from './instant';

export type Decision = 'succeed' | 'retry' | 'dead' | 'pause';
export type DeadReason = 'max_attempts' | 'permanent' | 'poison' | 'expired';

export interface DecisionInput {
  errorClass: ErrorClass;
  /** 1-based: the attempt that just finished. */
  attemptNumber: number;
  policy: RetryPolicy;
  /** The server's requested wait (see serverRequestedDelayMs), or null when it asked for none. */
  serverDelayMs: number | null;
  /** The job is worthless after this moment (a post about a live event), or null for no limit. */
  publishBy: Date | null;
  now: Date;
  /** Uniform in [0, 1). */
  random: () => number;
}

export interface RetryDecision {
  decision: Decision;
  /** When the next attempt is due; set only for `retry`. */
  retryAt: Date | null;
  /** Why the job is dead; set only for `dead`. */
  deadReason: DeadReason | null;
  /** The wait before `retryAt`; set only for `retry`. */
  delayMs: number | null;
}

const SUCCEED: RetryDecision = { decision: 'succeed', retryAt: null, deadReason: null, delayMs: null };
const PAUSE: RetryDecision = { decision: 'pause', retryAt: null, deadReason: null, delayMs: null };

function dead(deadReason: DeadReason): RetryDecision {
  return { decision: 'dead', retryAt: null, deadReason, delayMs: null };
}

/** True once `now` is strictly after `publishBy`; publishing exactly at the deadline is allowed. */
export function isExpired(publishBy: Date | null, now: Date): boolean {
  return publishBy !== null && now.getTime() > publishBy.getTime();
}

/** A server-requested wait as a usable number of ms: absent or nonsensical values mean none. */
function usableServerDelay(serverDelayMs: number | null, capMs: number): number {
  if (serverDelayMs === null || !(serverDelayMs > 0)) return 0;
  const cap = capMs > 0 ? capMs : 0;
  return Math.min(serverDelayMs, cap, Number.MAX_SAFE_INTEGER);
}

/**
 * The whole retry decision for one finished attempt (docs/delivery.md).
 *
 * - success → succeed.
 * - auth → pause: retrying with rejected credentials cannot succeed and would burn attempts (and
 *   could get the account locked); the account goes to needs_reauth and its jobs wait for a person.
 * - permanent / poison → dead at once, whatever attempts remain: the same request would get the
 *   same refusal, or there is no request to send.
 * - transient → dead (max_attempts) when this was the last allowed attempt; otherwise wait
 *   max(full-jitter backoff, server's wait capped at maxServerDelayMs). The server's wait wins
 *   when longer because retrying earlier only earns another 429/503 (RFC 9110 §10.2.3); the cap
 *   stops a broken or hostile receiver from parking a job for a year. If that retry would land
 *   after publishBy the job is dead as expired now rather than retried uselessly later.
 *
 * `attemptNumber < maxAttempts` is written so that a NaN anywhere means "no more attempts":
 * a corrupt counter must end in a dead job a person can see, not in retries forever.
 */
export function decideAfterAttempt(input: DecisionInput): RetryDecision {
  const { errorClass, attemptNumber, policy, serverDelayMs, publishBy, now, random } = input;

  switch (errorClass) {
    case 'success':
      return SUCCEED;
    case 'auth':
      return PAUSE;
    case 'permanent':
      return dead('permanent');
    case 'poison':
      return dead('poison');
    case 'transient':
      break;
    default: {
      const unreachable: never = errorClass;
      throw new Error(`unknown error class ${String(unreachable)}`);
    }
  }

  if (!(attemptNumber < policy.maxAttempts)) return dead('max_attempts');

  const backoff = backoffDelayMs(attemptNumber, policy, random);
  const delayMs = Math.max(backoff, usableServerDelay(serverDelayMs, policy.maxServerDelayMs));
  const retryAt = addMsClamped(now, delayMs);

  if (publishBy !== null && retryAt.getTime() > publishBy.getTime()) return dead('expired');

  return { decision: 'retry', retryAt, deadReason: null, delayMs: retryAt.getTime() - now.getTime() };
}
