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
