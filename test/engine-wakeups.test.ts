import { useMediumEngine } from './support/medium-engine';
import { fastEngine, NO_BREAKER } from './support/config';

/**
 * An idle worker sleeps until the next scheduled job, and polls only as a safety net. With a
 * poll interval of a minute (as behind a pooler, where wake-ups come from LISTEN), a retry the
 * worker scheduled itself must still go out when it falls due, however soon that is: the worker
 * learns the next run_at from the round that claimed nothing, in the same transaction.
 *
 * Before, it asked a moment later in a query of its own, `run_at > now()`: a retry that fell
 * due in between was neither claimed nor counted, and waited for the next poll (the fault
 * suite's pooler case, "receiver got 2001 request(s), expected 2002 within 15000 ms").
 */
describe('wake-ups of an idle worker', () => {
  const engine = useMediumEngine(() => {
    const fast = fastEngine();
    return {
      circuit: NO_BREAKER,
      // Retries due within 0–10 ms of their failure: the window the separate query missed.
      retry: { ...fast.retry!, baseDelayMs: 10, maxDelayMs: 10 },
      worker: { ...fast.worker!, pollIntervalMs: 60_000, sweepIntervalMs: 60_000 },
    };
  });

  it('sends every retry it scheduled when it falls due, with a poll interval of a minute', async () => {
    // Every job's first request fails, its second succeeds.
    const seen = new Set<string>();
    const r = await engine.receiver((request) => {
      const key = String(request.headers['idempotency-key']);
      if (seen.has(key)) return 200;
      seen.add(key);
      return 503;
    });
    const account = await engine.account(r.urlFor('/hook'));
    // One job at a time, so the worker is idle when each retry falls due. A retry left for the
    // poll would take a minute: the 30 s wait for each job fails long before.
    for (let i = 0; i < 20; i++) {
      const post = await engine.post({ text: `retried ${i}`, targets: [{ accountId: account.id }] });
      const job = await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'succeeded');
      expect(job.attempts.map((a) => a.httpStatus)).toEqual([503, 200]);
    }
    expect(r.requests).toHaveLength(40);
  }, 300_000);
});
