/**
 * How often a process tells the other processes that jobs were added (NOTIFY herald_jobs): at
 * most once per window. The first addition after a quiet window goes out at once; additions
 * within the window are folded into one NOTIFY at its end, carrying the earliest run_at among
 * them (a woken worker claims what is due and then sets its timer for the next scheduled job,
 * so the earliest is all it needs). Local workers are woken directly, without waiting.
 *
 * Pure: the caller passes the time, sends what `add` or `flush` returns, and calls `flush` at
 * `flushAt`.
 */
export class WakeFold {
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private pending: number | null = null;

  constructor(readonly windowMs: number) {}

  /** Jobs due at `runAt` were committed at `now`: the run_at to send now, or null (folded; see `flushAt`). */
  add(runAt: number, now: number): number | null {
    if (this.pending === null && now - this.lastSentAt >= this.windowMs) {
      this.lastSentAt = now;
      return runAt;
    }
    this.pending = this.pending === null ? runAt : Math.min(this.pending, runAt);
    return null;
  }

  /** When the folded additions are to be sent (null: nothing waits). */
  get flushAt(): number | null {
    return this.pending === null ? null : this.lastSentAt + this.windowMs;
  }

  /** The window ended: the folded run_at to send, or null. */
  flush(now: number): number | null {
    const out = this.pending;
    if (out === null) return null;
    this.pending = null;
    this.lastSentAt = now;
    return out;
  }
}
