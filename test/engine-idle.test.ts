import { WorkerService } from '../src/worker/worker.service';
import { useMediumEngine } from './support/medium-engine';
import { fastEngine, NO_BREAKER } from './support/config';

/**
 * An idle worker does not poll (worker/maintenance-plan.ts): it sleeps until a moment it knows.
 * Here the poll interval and the safety sweep are ten minutes, so anything that happens within
 * a test's deadline happened at its moment, through a timer: the next job's run_at (read by the
 * round that found nothing due) and the end of a running job's lease (read by the maintenance).
 *
 * The worker starts after the scene is set (WORKER_ENABLED off, WorkerService.start() by the
 * test), so no NOTIFY and no wake-up of the post's own process reaches it: what it learns, it
 * learns from the database.
 */
const TEN_MINUTES = 600_000;
const asleep = () => {
  const fast = fastEngine();
  return {
    circuit: NO_BREAKER,
    worker: { ...fast.worker!, enabled: false, pollIntervalMs: TEN_MINUTES, sweepIntervalMs: TEN_MINUTES },
  };
};

describe('an idle worker: a job due later', () => {
  const engine = useMediumEngine(asleep);

  it('sends a job scheduled 3 s ahead at its time, with no poll and the sweep ten minutes away', async () => {
    const r = await engine.receiver(() => 200);
    const account = await engine.account(r.urlFor('/later'));
    const scheduledAt = new Date(Date.now() + 3_000);
    const post = await engine.post({
      text: 'in three seconds',
      scheduledAt: scheduledAt.toISOString(),
      targets: [{ accountId: account.id }],
    });
    engine.m.get(WorkerService).start();

    const job = await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'succeeded');
    expect(job.attempts).toHaveLength(1);
    // Not before its time (the database's clock and this one are the same machine's).
    expect(Date.parse(job.attempts[0].startedAt)).toBeGreaterThanOrEqual(scheduledAt.getTime() - 50);
    expect(r.requests).toHaveLength(1);
  });
});

describe("an idle worker: a dead worker's lease", () => {
  const engine = useMediumEngine(asleep);

  it('reclaims the job of a worker that died when its lease ends, and sends it, with no poll and the sweep ten minutes away', async () => {
    const r = await engine.receiver(() => 200);
    const account = await engine.account(r.urlFor('/orphan'));
    // Due in an hour, so that nothing claims it but the reclaim; then leased to a worker that is
    // gone, its lease ending in 3 s (what a claim by a process killed a moment later leaves).
    const post = await engine.post({
      text: 'its worker died',
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
      targets: [{ accountId: account.id }],
    });
    const jobId = post.jobs[0].id;
    await engine.sql(
      `UPDATE job_state SET status = 'in_progress', lease_owner = 'gone-host:1:dead00', lease_expires_at = now() + interval '3 seconds',
              attempt_count = attempt_count + 1, run_at = now()
       WHERE job_id = $1`,
      [jobId],
    );
    engine.m.get(WorkerService).start();

    const job = await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
    // The lost attempt is in the history as worker_lost, then the worker's own attempt succeeded.
    expect(job.attempts.map((a) => [a.networkError, a.httpStatus])).toEqual([
      ['worker_lost', null],
      [null, 200],
    ]);
    expect(r.requests).toHaveLength(1);
  });
});
