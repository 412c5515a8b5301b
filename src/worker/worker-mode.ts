/**
 * The modes of a process's worker loop (WorkerService), after graphile-worker's LocalQueue: every
 * change of mode goes through `assertModeChange`, so a loop can never, say, claim again after it
 * began to drain.
 *
 * - idle: built, not started (WORKER_ENABLED=false stays here: the API serves, nothing is claimed);
 * - running: rounds claim and record, periodic work (maintenance, lease renewal) runs;
 * - draining: SIGTERM came: no more claims or maintenance; attempts in flight finish (bounded by
 *   WORKER_SHUTDOWN_GRACE_MS), their outcomes are recorded, leased jobs not started go back;
 * - stopped: nothing runs and nothing is left in the background.
 */
export type WorkerMode = 'idle' | 'running' | 'draining' | 'stopped';

export const WORKER_MODE_CHANGES: Readonly<Record<WorkerMode, readonly WorkerMode[]>> = {
  idle: ['running', 'stopped'],
  running: ['draining'],
  draining: ['stopped'],
  stopped: [],
};

export function assertModeChange(from: WorkerMode, to: WorkerMode): WorkerMode {
  if (!WORKER_MODE_CHANGES[from].includes(to)) throw new Error(`worker: no change of mode from ${from} to ${to}`);
  return to;
}
