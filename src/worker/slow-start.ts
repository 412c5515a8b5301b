import type { SlowStart } from '../queue/queue.types';

/**
 * Slow start after recovery (docs/delivery.md "slow start"): an account whose circuit just closed
 * (its receiver answered again after an outage) does not get its whole in-flight cap at once.
 * Its cap ramps linearly from 1 to `maxInFlight` over `rampMs` from the moment the circuit
 * closed, as a load balancer ramps a backend that came back (a slow start). Without it, every
 * account's backlog went out as fast as the caps allowed the moment its circuit closed, and the
 * shape of the recovery depended on the machine (the fault suite's retry storm).
 *
 * effective = 1 + floor((maxInFlight − 1) × elapsed / rampMs), clamped to [1, maxInFlight]:
 * - no close recorded (`closedAt` null: never opened, or opened before this was recorded),
 *   `rampMs` 0, or the ramp over: the full cap;
 * - at the close (or a `now` before it: clocks of one database, so only rounding): 1;
 * - never decreasing while time goes forward.
 *
 * Its cost: while the backlog outlasts the ramp, the account sends (maxInFlight − 1) / 2 ×
 * rampMs fewer attempt-slots' worth than without it, so its drain ends at most
 * rampMs × (maxInFlight − 1) / (2 × maxInFlight) later (< rampMs / 2); a backlog smaller than the
 * ramp's area drains within rampMs.
 */
export function slowStartCap(maxInFlight: number, closedAt: Date | null, now: Date, rampMs: number): number {
  const cap = Math.max(1, Math.floor(maxInFlight));
  if (closedAt === null || !(rampMs > 0)) return cap;
  const elapsed = now.getTime() - closedAt.getTime();
  if (!Number.isFinite(elapsed)) return cap;
  if (elapsed >= rampMs) return cap;
  if (elapsed <= 0) return 1;
  return Math.min(cap, Math.max(1, 1 + Math.floor(((cap - 1) * elapsed) / rampMs)));
}

/**
 * Jobs an account may hold leased at once: its cap times `prefetch` (leases per slot, see
 * claim-candidates.ts) once the ramp is over; during the ramp only the ramped cap, with no
 * prefetch, because a process runs every job it holds of an account up to the account's full
 * cap: leases are what keeps the attempts in flight within the ramp.
 */
export function leaseCapacity(maxInFlight: number, prefetch: number, closedAt: Date | null, now: Date, rampMs: number): number {
  const ramped = slowStartCap(maxInFlight, closedAt, now, rampMs);
  return ramped < Math.max(1, Math.floor(maxInFlight)) ? ramped : ramped * prefetch;
}

export const NO_SLOW_START: SlowStart = { rampMs: 0, ratePerS: 0 };

/**
 * The rate ramp (docs/delivery.md "slow start"): the in-flight ramp bounds the attempts open at
 * once, not how fast they go out; against a receiver that answers in milliseconds one attempt in
 * flight is still tens of requests a second, and every account whose circuit closes sends its
 * backlog in a burst. So, during the ramp, an account's request rate also ramps, linearly from
 * half of `ratePerS` at the close to all of it at the ramp's end: the jobs leased since the close
 * (`slow_start_leased`, counted in the account row under the round's lock, so across processes)
 * stay within the area under that line, plus one:
 *
 *   budget(t) = 1 + floor(ratePerS × t × (2 × rampMs + t) / (4000 × rampMs)), t = ms since the close
 *
 * (= 1 + ratePerS × (t/2 + t² / (4 × rampMs)) in seconds). Defaults (10 s, 20/s): 1 at the close,
 * 11 by 1 s, 63 by 5 s, 151 by the end. After the ramp (or with no close recorded, the ramp off,
 * or the rate 0): no bound (Infinity). Never decreasing while time goes forward; the SQL scan
 * computes the same, in the same float operations (claim-candidates.ts).
 *
 * Why half the rate at the start, not 0: each account's requests then come at a nearly even
 * rate instead of a triangle that peaks when its backlog ends, and the sum over many accounts
 * whose circuits close a few seconds apart has a lower peak for the same drain (simulated with
 * the retry storm's closing times: peak-to-mean at the 90th percentile 1.99 against 2.28 from 0;
 * docs/fault-suite.md).
 *
 * Its cost: a backlog of n jobs within the ramp's area takes the t at which budget(t) reaches n
 * instead of well under a second against a fast receiver (100 jobs: 7.3 s); a larger backlog goes
 * out at full speed once the ramp is over, at most `rampMs` later than without it.
 */
export function slowStartBudget(closedAt: Date | null, now: Date, s: SlowStart): number {
  if (closedAt === null || !(s.rampMs > 0) || !(s.ratePerS > 0)) return Infinity;
  const ms = now.getTime() - closedAt.getTime();
  if (!Number.isFinite(ms) || ms >= s.rampMs) return Infinity;
  if (ms <= 0) return 1;
  return 1 + Math.floor((s.ratePerS * ms * (2 * s.rampMs + ms)) / (4000 * s.rampMs));
}

/**
 * When an account that has leased `leased` jobs since its close may lease one more: the first
 * millisecond at which slowStartBudget exceeds `leased` (at most the ramp's end), or null when
 * the budget does not bound it (no ramp running). The worker wakes then, so a paced account does
 * not wait for the poll interval.
 */
export function slowStartNextAt(closedAt: Date | null, leased: number, s: SlowStart): Date | null {
  if (closedAt === null || !(s.rampMs > 0) || !(s.ratePerS > 0)) return null;
  if (leased < 1) return closedAt;
  // budget(ms) > leased ⇔ ms² + 2 × rampMs × ms − 4000 × rampMs × leased / ratePerS ≥ 0.
  let ms = Math.ceil(-s.rampMs + Math.sqrt(s.rampMs * s.rampMs + (4000 * s.rampMs * leased) / s.ratePerS));
  // Well past the ramp's area: the ramp's end, when the budget no longer applies (the loops below
  // would otherwise step there one millisecond at a time).
  if (!(ms <= s.rampMs + 1)) return new Date(closedAt.getTime() + s.rampMs);
  // The square root is a float: step to the exact first millisecond the formula allows.
  const at = (m: number) => slowStartBudget(closedAt, new Date(closedAt.getTime() + m), s);
  while (ms > 1 && at(ms - 1) > leased) ms -= 1;
  while (ms < s.rampMs && at(ms) <= leased) ms += 1;
  return new Date(closedAt.getTime() + Math.min(ms, s.rampMs));
}
