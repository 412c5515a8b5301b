/**
 * When the sweep after one planned for `plannedAt` runs: the next multiple of the interval, counted
 * from the Unix epoch (so a 60 s interval runs at second 0 of every minute, UTC). A timer that
 * fires a little late or early does not shift or repeat the schedule: the next run is planned
 * from the planned time, not from when the timer fired, and a run planned in the past (the
 * process was frozen) is moved to the next boundary from now.
 */
export function nextSweepAt(plannedAt: number, intervalMs: number, now: number): number {
  const next = plannedAt + intervalMs;
  return next > now ? next : (Math.floor(now / intervalMs) + 1) * intervalMs;
}
