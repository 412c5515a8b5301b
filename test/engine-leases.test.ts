import { useMediumEngine } from './support/medium-engine';
import { pollUntil } from './support/poll';
import { Receiver } from './support/receiver';
import { fastEngine, NO_BREAKER } from './support/config';

/**
 * A worker leases up to 2 × an account's in-flight cap and starts the extra jobs as slots free.
 * Leased jobs that have not started must never outrun a person's decision or the breaker.
 *
 * The receiver holds its answers until the test lets them go, so "what was running when the
 * account changed" does not depend on how fast a loaded machine is; and the checks that nothing
 * more was sent come after a barrier delivery (the fixture's barrier), not after a sleep.
 */
describe('leased jobs waiting in a worker', () => {
  // Held answers must not time out while the test sets the scene: on a loaded machine, making the
  // posts has taken longer than the fixture's 3 s request timeout, and the held requests ended as
  // transient failures, which freed their slots and let the waiting jobs go out (seen: 8 requests
  // instead of 5). A request timeout of a minute keeps "held until released" true.
  const engine = useMediumEngine(() => {
    const fast = fastEngine();
    return {
      circuit: NO_BREAKER,
      http: { ...fast.http!, totalTimeoutMs: 60_000 },
      worker: { ...fast.worker!, leaseMs: 125_000, attemptTimeoutMs: 60_000 },
    };
  });

  /** Answers every request with `reply` once `release()` is called; requests that come later are answered at once. */
  function heldAnswers(receiver: Receiver, reply: { status: number; headers?: Record<string, string> }): () => void {
    const waiting: (() => void)[] = [];
    let released = false;
    receiver.setHandler(() => (released ? reply : new Promise((resolve) => waiting.push(() => resolve(reply)))));
    return () => {
      released = true;
      for (const go of waiting.splice(0)) go();
    };
  }

  it('disabling an account stops its leased jobs that have not started', async () => {
    const receiver = await engine.receiver();
    const release = heldAnswers(receiver, { status: 200 });
    const account = await engine.account(receiver.urlFor('/slow'));
    const ids = await engine.postMany(account.id, 12, 'queued');
    await receiver.waitFor(5, 30_000); // 5 running (the cap) and held there
    // ... and 5 more leased behind them, waiting in the worker for a slot.
    await pollUntil(
      'ten jobs leased to the worker',
      () => engine.jobRows(ids),
      (rows) => rows.filter((j) => j.status === 'in_progress').length === 10,
    );
    await engine.updateAccount(account.id, { status: 'disabled' });
    release();
    await pollUntil(
      'the jobs to settle',
      () => engine.jobRows(ids),
      (rows) => rows.every((j) => j.status === 'succeeded' || j.status === 'paused'),
    );
    await engine.barrier();
    // Only the attempts already running when the account was disabled reached the receiver.
    expect(receiver.requests).toHaveLength(5);
    const rows = await engine.jobRows(ids);
    expect(rows.filter((j) => j.status === 'succeeded')).toHaveLength(5);
    const paused = rows.filter((j) => j.status === 'paused');
    expect(paused).toHaveLength(7);
    expect(paused.every((j) => j.attempt_count === 0 && j.attempts === 0)).toBe(true); // given back without spending an attempt
  }, 60_000);

  it('after a failed attempt the leased jobs behind it go back instead of being sent', async () => {
    const receiver = await engine.receiver();
    // Retry-After of an hour: a failed job's next attempt cannot fall inside this test. (With the
    // backoff alone, full jitter draws the first retry anywhere in [0, base]: a draw of 0.8 s
    // once made a legitimate retry look like a given-back job being sent.)
    const release = heldAnswers(receiver, { status: 503, headers: { 'retry-after': '3600' } });
    const account = await engine.account(receiver.urlFor('/failing'));
    const ids = await engine.postMany(account.id, 10, 'fails');
    await receiver.waitFor(5, 30_000);
    // Five held at the receiver, five more leased behind them in the worker.
    await pollUntil(
      'all ten jobs to be leased',
      () => engine.jobRows(ids),
      (rows) => rows.every((j) => j.status === 'in_progress'),
    );
    release();
    await pollUntil(
      'every job to fail once',
      () => engine.jobRows(ids),
      (rows) => rows.every((j) => j.status === 'scheduled' && j.attempt_count > 0),
    );
    await engine.barrier();
    // The five jobs leased behind the failures went back without an attempt; the next rounds
    // sent them (the breaker is out of the way here). So: one attempt row per request the
    // receiver saw, every job attempted exactly once, none counted twice, none sent twice.
    const rows = await engine.jobRows(ids);
    expect(receiver.requests).toHaveLength(10);
    expect(rows.map((j) => [j.attempt_count, j.attempts])).toEqual(rows.map(() => [1, 1]));
    expect(new Set(receiver.requests.map((r) => r.headers['idempotency-key']))).toEqual(new Set(rows.map((j) => j.id)));
  }, 60_000);
});
