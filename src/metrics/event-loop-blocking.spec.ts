import fc from 'fast-check';
import * as fs from 'node:fs';
import { blockedMs, EventLoopBlockingMonitor, parseSchedstat } from './event-loop-blocking';

/** CPU time of this thread in ms (Linux), else of the process. */
function cpuMs(): number {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
}

/** Keeps the loop busy until this thread has run `ms` of CPU: a parser that never yields. */
function busyFor(ms: number): void {
  const until = cpuMs() + ms;
  while (cpuMs() < until);
}

describe('event-loop blocking', () => {
  it('is the lateness of a tick less the time the thread waited for a CPU', () => {
    expect(blockedMs(10.4, 10, 0)).toBeCloseTo(0.4);
    // 150 ms late, 100 ms of it waiting for a CPU: the process itself ran 50 ms without yielding.
    expect(blockedMs(160, 10, 100)).toBe(50);
    // Late only because the machine did not run it: nothing of its own.
    expect(blockedMs(210, 10, 200)).toBe(0);
    expect(blockedMs(15, 10, 40)).toBe(0);
  });

  it('counts a stretch at most as long as the thread ran in it', () => {
    // Seen in the hostile-receivers suite on a loaded machine: 358 ms late, 90 ms of it waiting
    // for a CPU, 2 ms run; the rest the thread waited off the run queue (for the garbage
    // collector's helper threads): a wait, not work that kept the loop.
    expect(blockedMs(358.4, 10, 90.3, 2.1)).toBeCloseTo(2.1);
    // A parser that spins: the whole stretch was run.
    expect(blockedMs(312, 10, 0, 302)).toBe(302);
    expect(blockedMs(312, 10, 2, 305)).toBe(300);
    // Unknown (not Linux): the lateness less the wait, as before.
    expect(blockedMs(160, 10, 100, null)).toBe(50);
    expect(blockedMs(160, 10, 100)).toBe(50);
    expect(blockedMs(20, 10, 50, 5)).toBe(0);
  });

  it('never counts more than the lateness less the wait, nor more than the time run, nor below zero', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 10_000, noNaN: true }),
        fc.double({ min: 0, max: 10_000, noNaN: true }),
        fc.option(fc.double({ min: 0, max: 10_000, noNaN: true })),
        (elapsed, wait, ran) => {
          const b = blockedMs(elapsed, 10, wait, ran);
          expect(b).toBeGreaterThanOrEqual(0);
          expect(b).toBeLessThanOrEqual(Math.max(0, elapsed - 10 - wait) + 1e-9);
          if (ran !== null) expect(b).toBeLessThanOrEqual(ran + 1e-9);
        },
      ),
    );
  });

  it('reads the time run and the run-queue wait from a schedstat line', () => {
    const read = parseSchedstat('129884379 180826194 45\n');
    expect(read?.onCpuMs).toBeCloseTo(129.884379);
    expect(read?.runQueueWaitMs).toBeCloseTo(180.826194);
    expect(parseSchedstat('')).toBeNull();
    expect(parseSchedstat('12 x 3')).toBeNull();
    expect(parseSchedstat('x 12 3')).toBeNull();
  });

  it('reports a busy stretch of the loop and starts a new window when read', async () => {
    const monitor = new EventLoopBlockingMonitor(5);
    monitor.start();
    try {
      await new Promise((r) => setTimeout(r, 30));
      monitor.take();
      busyFor(150);
      await new Promise((r) => setTimeout(r, 30));
      // Whatever the machine's load, CPU time the loop spent on itself is not subtracted.
      expect(monitor.take()).toBeGreaterThanOrEqual(140);
      await new Promise((r) => setTimeout(r, 30));
      expect(monitor.take()).toBeLessThan(140);
    } finally {
      monitor.stop();
    }
  });

  it('does not count a stretch the thread spent waiting rather than running (Linux), and counts it in full elsewhere', async () => {
    const linux = fs.existsSync('/proc/thread-self/schedstat');
    const monitor = new EventLoopBlockingMonitor(5);
    monitor.start();
    try {
      await new Promise((r) => setTimeout(r, 30));
      monitor.take();
      // 200 ms asleep on the loop's thread: the loop is held, but by a wait, not by work.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
      await new Promise((r) => setTimeout(r, 30));
      if (linux) expect(monitor.take()).toBeLessThan(50);
      else expect(monitor.take()).toBeGreaterThanOrEqual(190);
    } finally {
      monitor.stop();
    }
  });

  it('ticks coarsely once the loop is quiet, and finely again as soon as work starts', async () => {
    // A quiet window of 60 ms instead of a second, so the test does not wait.
    const monitor = new EventLoopBlockingMonitor(5, 60);
    monitor.start();
    try {
      expect(monitor.state).toBe('fine');
      await waitFor(() => monitor.state === 'coarse', 10_000);
      monitor.wake();
      expect(monitor.state).toBe('fine');
      // A stretch right after work started is timed by the fine ticks, in full.
      monitor.take();
      busyFor(150);
      await new Promise((r) => setTimeout(r, 30));
      expect(monitor.take()).toBeGreaterThanOrEqual(140);
    } finally {
      monitor.stop();
    }
  });

  it('goes back to fine ticks by itself when the loop gets busy while coarse', async () => {
    const monitor = new EventLoopBlockingMonitor(5, 60);
    monitor.start();
    try {
      await waitFor(() => monitor.state === 'coarse', 10_000);
      // Work nobody announced (no wake): 20 ms of it, well above a quiet window's.
      busyFor(20);
      await waitFor(() => monitor.state === 'fine', 5_000);
    } finally {
      monitor.stop();
    }
  });
});

/** Waits for `ok` (checked every 20 ms) up to `ms`. */
async function waitFor(ok: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
