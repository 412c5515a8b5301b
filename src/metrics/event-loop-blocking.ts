import * as fs from 'node:fs';
import { EventLoopUtilization, performance } from 'node:perf_hooks';

/**
 * How long the event loop was kept busy by the process's own work (JavaScript, garbage
 * collection, synchronous computation) rather than by a machine too loaded to run it.
 *
 * A timer's lateness (what `monitorEventLoopDelay` reports) mixes both: on a loaded machine the
 * operating system may keep a ready process waiting for a CPU for a hundred milliseconds and
 * more while Herald does nothing wrong. On Linux the kernel counts, per thread
 * (`/proc/thread-self/schedstat`, in ns), the time the thread ran and the time it waited for a
 * CPU. A tick's lateness less the wait is what remains, and the stretch counts at most as long as
 * the thread actually ran in it: the thread also stops without being in the run queue, when it
 * waits for the garbage collector's helper threads (which themselves wait for a CPU on a loaded
 * machine) or for the disk. Measured in the hostile-receivers suite with the whole test run
 * beside it: a tick 358 ms late had waited 90 ms for a CPU and run 2 ms; it counted 258 ms before
 * this cap and counts 2 ms with it, while a parser that spins for 300 ms still counts 300.
 * A synchronous wait (a disk read, `Atomics.wait`) is therefore not counted: what this figure
 * judges is work that keeps the loop, not waits. Elsewhere than Linux both are unknown and the
 * figure is the plain lateness.
 */

/**
 * Lateness of one tick minus the time the thread waited for a CPU, never below zero and never
 * more than the time the thread ran (`onCpuMs`, null when unknown). Pure.
 */
export function blockedMs(elapsedMs: number, intervalMs: number, runQueueWaitMs: number, onCpuMs: number | null = null): number {
  const late = Math.max(0, elapsedMs - intervalMs - runQueueWaitMs);
  return onCpuMs === null ? late : Math.min(late, Math.max(0, onCpuMs));
}

/** A thread's counters since it started, in ms: the time it ran and the time it waited for a CPU. */
export interface Schedstat {
  onCpuMs: number;
  runQueueWaitMs: number;
}

/** A thread's counters from the text of a schedstat file ("oncpu_ns waiting_ns slices"), or null. */
export function parseSchedstat(schedstat: string): Schedstat | null {
  const fields = schedstat.trim().split(/\s+/);
  if (fields.length < 2 || !/^\d+$/.test(fields[0]) || !/^\d+$/.test(fields[1])) return null;
  return { onCpuMs: Number(fields[0]) / 1e6, runQueueWaitMs: Number(fields[1]) / 1e6 };
}

const SCHEDSTAT = '/proc/thread-self/schedstat';

function readSchedstat(): Schedstat | null {
  try {
    return parseSchedstat(fs.readFileSync(SCHEDSTAT, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * A loop busy this long or longer within a quiet check's window (a second) is at work: the
 * monitor ticks finely. An idle Herald's second (prom-client's 10 ms event-loop-delay timer, a
 * timer of its own now and then) keeps its loop busy for about a millisecond; a stretch shorter
 * than this is far below what the metric is read for (hundreds of ms).
 */
const QUIET_ACTIVE_MS = 10;

export type BlockingMonitorMode = 'stopped' | 'fine' | 'coarse';

/**
 * Ticks every `intervalMs` (10 ms) on the main thread while the process works, and keeps the
 * worst blocking since the last take(). A 10 ms tick costs an idle process more than everything
 * else it does (100 wake-ups and schedstat reads a second; an idle Herald went from 0.82 to
 * 0.35 % of a core without them, docs/benchmarks.md "Idle"), so after a second in which the
 * loop was busy less than QUIET_ACTIVE_MS (performance.eventLoopUtilization) it ticks every
 * `idleIntervalMs` (1 s) instead, and goes back to fine ticks:
 * - at once when work starts (`wake`: a request comes in, the worker starts a round), so a
 *   stretch that work blocks is timed by fine ticks from its start;
 * - at the next coarse tick after a second in which the loop was busy for QUIET_ACTIVE_MS or
 *   more (work nobody announced: a timer of the notifier, a NOTIFY).
 * A coarse tick judges its own lateness the same way (less the CPU wait), so a stretch blocked
 * while coarse is still seen when it delays that tick; one that ends before the tick is due is
 * not, which only the work nobody announced can do, and that is what wakes the fine ticks.
 */
export class EventLoopBlockingMonitor {
  private timer: NodeJS.Timeout | null = null;
  private mode: BlockingMonitorMode = 'stopped';
  private worstMs = 0;
  private lastAt = 0;
  private lastSched: Schedstat | null = null;
  /** Where the current quiet check's window began (fine: a second of ticks; coarse: one tick). */
  private windowAt = 0;
  private windowElu: EventLoopUtilization | null = null;

  constructor(
    private readonly intervalMs = 10,
    private readonly idleIntervalMs = 1000,
  ) {}

  get state(): BlockingMonitorMode {
    return this.mode;
  }

  start(): void {
    if (this.mode !== 'stopped') return;
    this.tickEvery('fine');
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.mode = 'stopped';
  }

  /** Work starts: tick finely from now if the monitor idles. Cheap enough to call on every request. */
  wake(): void {
    if (this.mode === 'coarse') this.tickEvery('fine');
  }

  /** The worst blocking (ms) since the previous call; starts a new window. */
  take(): number {
    const worst = this.worstMs;
    this.worstMs = 0;
    return worst;
  }

  private tickEvery(mode: 'fine' | 'coarse'): void {
    if (this.timer) clearInterval(this.timer);
    this.mode = mode;
    this.lastAt = performance.now();
    this.lastSched = readSchedstat();
    this.windowAt = this.lastAt;
    this.windowElu = performance.eventLoopUtilization();
    this.timer = setInterval(() => this.tick(), mode === 'fine' ? this.intervalMs : this.idleIntervalMs);
    this.timer.unref();
  }

  private tick(): void {
    const now = performance.now();
    const sched = readSchedstat();
    const last = this.lastSched;
    const waited = sched && last ? sched.runQueueWaitMs - last.runQueueWaitMs : 0;
    const ran = sched && last ? sched.onCpuMs - last.onCpuMs : null;
    const interval = this.mode === 'fine' ? this.intervalMs : this.idleIntervalMs;
    this.worstMs = Math.max(this.worstMs, blockedMs(now - this.lastAt, interval, waited, ran));
    this.lastAt = now;
    this.lastSched = sched;
    if (now - this.windowAt < this.idleIntervalMs && this.mode === 'fine') return;
    const active = this.windowElu ? performance.eventLoopUtilization(this.windowElu).active : QUIET_ACTIVE_MS;
    const quiet = active < QUIET_ACTIVE_MS;
    if (this.mode === 'fine' && quiet) this.tickEvery('coarse');
    else if (this.mode === 'coarse' && !quiet) this.tickEvery('fine');
    else {
      this.windowAt = now;
      this.windowElu = performance.eventLoopUtilization();
    }
  }
}
