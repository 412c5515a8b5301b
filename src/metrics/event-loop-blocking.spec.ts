import * as fs from 'node:fs';
import { blockedMs, EventLoopBlockingMonitor, parseRunQueueWaitMs } from './event-loop-blocking';

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

  it('reads the run-queue wait from a schedstat line', () => {
    expect(parseRunQueueWaitMs('129884379 180826194 45\n')).toBeCloseTo(180.826194);
    expect(parseRunQueueWaitMs('')).toBeNull();
    expect(parseRunQueueWaitMs('12 x 3')).toBeNull();
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
