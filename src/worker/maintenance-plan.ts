import type { DueMoments } from '../queue/queue.types';

/** What the worker knows after a maintenance, for planning the next one. */
export interface MaintenanceState {
  /** The worker holds leased jobs (or outcomes not yet written): it is at work, not idle. */
  busy: boolean;
  /** Its LISTEN connection is up: a NOTIFY reaches it when another process adds work. */
  listening: boolean;
  /** What the queue holds, read after the maintenance (due-moments.ts); null: the read failed. */
  moments: DueMoments | null;
}

/**
 * How long until the next queue maintenance (crash recovery, stragglers, deadlines, a claim),
 * in ms. Pure.
 *
 * - Every poll interval (WORKER_POLL_INTERVAL_MS, 1 s) while the worker is at work, while due
 *   jobs wait that no claim could take (nothing announces when an open circuit's cooldown or a
 *   full account frees them), while its LISTEN connection is down (no NOTIFY reaches it), or
 *   when the read of the queue's moments failed: what it did before the idle redesign.
 * - Idle, at the earliest moment the queue named: a running job's lease that may expire (its
 *   worker may have died), a waiting job's publishBy; never later than the safety sweep
 *   (WORKER_SWEEP_INTERVAL_MS, 60 s), which covers what no moment and no NOTIFY announced: a
 *   job leased by another process after this read, whose worker then died, is found at most a
 *   sweep after its lease ends; a NOTIFY lost with its connection, at most a sweep later.
 * A moment already past plans the maintenance at once (0), never in a loop: the maintenance
 * that follows acts on it, and reads the moments again.
 */
export function nextMaintenanceMs(state: MaintenanceState, pollMs: number, sweepMs: number): number {
  const m = state.moments;
  if (state.busy || !state.listening || m === null || m.dueWaiting) return Math.min(pollMs, sweepMs);
  let next = sweepMs;
  for (const at of [m.leaseExpiresAt, m.publishBy]) {
    if (at === null) continue;
    // Just past the moment: the statements compare with `<` on the database's clock.
    next = Math.min(next, Math.max(0, at.getTime() - m.now.getTime() + 1));
  }
  return next;
}
