import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * How long the event loop was kept busy by the process's own work (JavaScript, garbage
 * collection, synchronous calls) rather than by a machine too loaded to run it.
 *
 * A timer's lateness (what `monitorEventLoopDelay` reports) mixes both: on a loaded machine the
 * operating system may keep a ready process waiting for a CPU for a hundred milliseconds and
 * more while Herald does nothing wrong. On Linux the kernel counts that wait per thread
 * (`/proc/thread-self/schedstat`, second field, in ns), so each tick subtracts it from the
 * lateness; what remains is time the loop spent not coming back to its timers. Elsewhere the
 * wait is unknown and counted as zero (the figure is then the plain lateness).
 */

/** Lateness of one tick minus the time the thread waited for a CPU, never below zero. Pure. */
export function blockedMs(elapsedMs: number, intervalMs: number, runQueueWaitMs: number): number {
  return Math.max(0, elapsedMs - intervalMs - runQueueWaitMs);
}

/** The run-queue wait in ms from the text of a schedstat file ("oncpu_ns waiting_ns slices"), or null. */
export function parseRunQueueWaitMs(schedstat: string): number | null {
  const fields = schedstat.trim().split(/\s+/);
  if (fields.length < 2 || !/^\d+$/.test(fields[1])) return null;
  return Number(fields[1]) / 1e6;
}

const SCHEDSTAT = '/proc/thread-self/schedstat';

function readRunQueueWaitMs(): number | null {
  try {
    return parseRunQueueWaitMs(fs.readFileSync(SCHEDSTAT, 'utf8'));
  } catch {
    return null;
  }
}

/** Ticks every `intervalMs` on the main thread and keeps the worst blocking since the last take(). */
export class EventLoopBlockingMonitor {
  private timer: NodeJS.Timeout | null = null;
  private worstMs = 0;
  private lastAt = 0;
  private lastWaitMs: number | null = null;

  constructor(private readonly intervalMs = 10) {}

  start(): void {
    if (this.timer) return;
    this.lastAt = performance.now();
    this.lastWaitMs = readRunQueueWaitMs();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The worst blocking (ms) since the previous call; starts a new window. */
  take(): number {
    const worst = this.worstMs;
    this.worstMs = 0;
    return worst;
  }

  private tick(): void {
    const now = performance.now();
    const waitMs = readRunQueueWaitMs();
    const waited = waitMs !== null && this.lastWaitMs !== null ? waitMs - this.lastWaitMs : 0;
    this.worstMs = Math.max(this.worstMs, blockedMs(now - this.lastAt, this.intervalMs, waited));
    this.lastAt = now;
    this.lastWaitMs = waitMs;
  }
}
