/** The largest instant a JavaScript Date can hold (ECMA-262 §21.4.1.1, ±8.64e15 ms). */
export const MAX_DATE_MS = 8.64e15;

/**
 * `now` plus a non-negative delay, clamped to the last representable Date. A saturated delay
 * (Number.MAX_SAFE_INTEGER ms) added to a real `now` would otherwise be an Invalid Date, which
 * compares false against everything and would slip past expiry checks.
 */
export function addMsClamped(now: Date, delayMs: number): Date {
  return new Date(Math.min(now.getTime() + delayMs, MAX_DATE_MS));
}
