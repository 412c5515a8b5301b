/**
 * The moments this worker knows jobs become due (from NOTIFY payloads and the retries it
 * scheduled itself), earliest first, so one timer can always be set for the next of them.
 * A single "earliest" slot is not enough: a job due at T+120 announced while a timer waits
 * for T+100 would be forgotten once T+100 fires while an attempt is in flight.
 * Bounded: past `capacity` the latest moments are dropped (the idle check of the next due
 * job and the poll interval still find them).
 */
export class WakeSchedule {
  private readonly times: number[] = [];

  constructor(private readonly capacity = 10_000) {}

  /** Adds a moment (epoch ms), keeping the list sorted. */
  add(at: number): void {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times[mid] < at) lo = mid + 1;
      else hi = mid;
    }
    if (this.times[lo] === at) return;
    this.times.splice(lo, 0, at);
    if (this.times.length > this.capacity) this.times.length = this.capacity;
  }

  /** The earliest moment still ahead, if any. */
  next(): number | undefined {
    return this.times[0];
  }

  /** Removes every moment at or before `now`; true if there was one. */
  popDue(now: number): boolean {
    let n = 0;
    while (n < this.times.length && this.times[n] <= now) n += 1;
    this.times.splice(0, n);
    return n > 0;
  }

  get size(): number {
    return this.times.length;
  }
}
