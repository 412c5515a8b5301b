import { assertModeChange, WORKER_MODE_CHANGES, WorkerMode } from './worker-mode';

describe('worker modes', () => {
  const modes = Object.keys(WORKER_MODE_CHANGES) as WorkerMode[];

  it('allows exactly the listed changes, and refuses every other by name', () => {
    for (const from of modes) {
      for (const to of modes) {
        if (WORKER_MODE_CHANGES[from].includes(to)) expect(assertModeChange(from, to)).toBe(to);
        else expect(() => assertModeChange(from, to)).toThrow(`worker: no change of mode from ${from} to ${to}`);
      }
    }
  });

  it('never goes back to claiming once it began to drain', () => {
    expect(() => assertModeChange('draining', 'running')).toThrow();
    expect(() => assertModeChange('stopped', 'running')).toThrow();
  });

  it('reaches stopped from every mode it can start in', () => {
    const reach = (from: WorkerMode, seen = new Set<WorkerMode>()): Set<WorkerMode> => {
      seen.add(from);
      for (const to of WORKER_MODE_CHANGES[from]) if (!seen.has(to)) reach(to, seen);
      return seen;
    };
    for (const m of modes) expect(reach(m).has('stopped')).toBe(true);
  });
});
