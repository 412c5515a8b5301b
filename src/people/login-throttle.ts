/**
 * The slow-down of repeated wrong API keys at the page's login (pure: the caller passes `now`).
 *
 * A client's wrong keys are counted while they keep coming (each within WINDOW_MS of the last).
 * The first FREE_FAILURES cost nothing (a typo, a key pasted with a character missing); every
 * one after that blocks the next try for twice as long as the one before, from 1 s up to
 * MAX_BLOCK_MS. While blocked, a login is refused at once without looking at the key, so sending
 * many tries in parallel does not get more guesses through. A correct key clears the count.
 *
 * Herald's generated keys carry 256 random bits, so this is not what keeps them from being
 * guessed; it stops a script from trying an operator-chosen HERALD_API_KEY (≥ 16 characters)
 * thousands of times a second, and keeps the log quiet.
 */

export const FREE_FAILURES = 3;
export const FIRST_BLOCK_MS = 1_000;
export const MAX_BLOCK_MS = 60_000;
/** Wrong keys further apart than this start the count again. */
export const WINDOW_MS = 15 * 60_000;

export interface ThrottleState {
  failures: number;
  lastFailureAt: Date | null;
  blockedUntil: Date | null;
}

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

/** How long the next try waits after the `failures`-th wrong key in a row (saturating, no overflow). */
export function blockAfter(failures: number): number {
  if (!Number.isFinite(failures) || failures <= FREE_FAILURES) return 0;
  const doublings = Math.min(failures - FREE_FAILURES - 1, 30);
  return Math.min(MAX_BLOCK_MS, FIRST_BLOCK_MS * 2 ** doublings);
}

/** May this client try a key now? */
export function checkThrottle(state: ThrottleState | null, now: Date): ThrottleDecision {
  if (state?.blockedUntil && state.blockedUntil.getTime() > now.getTime()) {
    return { allowed: false, retryAfterMs: state.blockedUntil.getTime() - now.getTime() };
  }
  return { allowed: true };
}

/** The state after one more wrong key at `now`. */
export function recordFailure(state: ThrottleState | null, now: Date): ThrottleState {
  const recent = state?.lastFailureAt != null && now.getTime() - state.lastFailureAt.getTime() <= WINDOW_MS;
  const failures = recent ? state.failures + 1 : 1;
  return { failures, lastFailureAt: now, blockedUntil: new Date(now.getTime() + blockAfter(failures)) };
}
