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

/**
 * How long until the next pass over the notifier's inboxes, in ms. Pure.
 * - LISTEN connection down: every poll interval (no NOTIFY reaches the notifier);
 * - else when the next mail falls due (`nextMailMs`, null: none waits), a NOTIFY waking it
 *   sooner; with nothing due, not before the minute's sweep, which runs a pass of its own (the
 *   long delay is only a bound for the timer).
 * A mail "due now" after a pass (0: more than one pass sends, or one no pass can take) is looked
 * at again a poll interval later, never in a loop.
 */
export function nextPollMs(listening: boolean, nextMailMs: number | null, pollIntervalMs: number): number {
  if (!listening) return pollIntervalMs;
  if (nextMailMs === null) return IDLE_PASS_MS;
  return nextMailMs <= 0 ? pollIntervalMs : Math.min(nextMailMs, IDLE_PASS_MS);
}

/** An idle notifier's pass timer: a bound only (the sweep runs a pass every minute anyway). */
export const IDLE_PASS_MS = 3_600_000;
