import { bearer, TestApp } from './support/app';
import { withClient } from './support/database';
import { bootEngine, createPost, createWebhookAccount } from './support/engine';
import { Receiver, startReceiver } from './support/receiver';
import { waitUntil } from './support/service';

/**
 * A worker leases up to 2 × an account's in-flight cap and starts the extra jobs as slots free.
 * Leased jobs that have not started must never outrun a person's decision or the breaker.
 *
 * The receiver holds its answers until the test lets them go, so "what was running when the
 * account changed" does not depend on how fast a loaded machine is.
 */
describe('leased jobs waiting in a worker', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await bootEngine({ circuit: { failureThreshold: 1000, cooldownMs: 30_000, disableThreshold: 1000 } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  /** Answers every request with `reply` once `release()` is called; requests that come later are answered at once. */
  function heldAnswers(reply: { status: number; headers?: Record<string, string> }): () => void {
    const waiting: (() => void)[] = [];
    let released = false;
    receiver.setHandler(() => (released ? reply : new Promise((resolve) => waiting.push(() => resolve(reply)))));
    return () => {
      released = true;
      for (const go of waiting.splice(0)) go();
    };
  }

  const jobRows = (postIds: string[]) =>
    withClient(t.databaseUrl, async (db) => {
      const { rows } = await db.query<{ id: string; status: string; attempt_count: number; attempts: number }>(
        `SELECT j.id, j.status, j.attempt_count, (SELECT count(*)::int FROM attempts a WHERE a.job_id = j.id) AS attempts
         FROM jobs j WHERE j.post_id = ANY($1::uuid[])`,
        [postIds],
      );
      return rows;
    });

  it('disabling an account stops its leased jobs that have not started', async () => {
    receiver.reset();
    const release = heldAnswers({ status: 200 });
    const account = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/slow'));
    const posts = [];
    for (let i = 0; i < 12; i++) posts.push(await createPost(t, t.adminKey, { text: `queued ${i}`, targets: [{ accountId: account.id }] }));
    await receiver.waitFor(5, 10_000); // 5 running (the cap) and held there; more leased behind them
    await t.http().patch(`/v1/accounts/${account.id}`).set(bearer(t.adminKey)).send({ status: 'disabled' }).expect(200);
    release();
    const ids = posts.map((p) => p.id);
    await waitUntil(
      async () => (await jobRows(ids)).every((j) => j.status === 'succeeded' || j.status === 'paused'),
      10_000,
      'jobs to settle',
    );
    await new Promise((r) => setTimeout(r, 1000));
    // Only the attempts already running when the account was disabled reached the receiver.
    expect(receiver.requests).toHaveLength(5);
    const rows = await jobRows(ids);
    expect(rows.filter((j) => j.status === 'succeeded')).toHaveLength(5);
    const paused = rows.filter((j) => j.status === 'paused');
    expect(paused).toHaveLength(7);
    expect(paused.every((j) => j.attempt_count === 0 && j.attempts === 0)).toBe(true); // given back without spending an attempt
  }, 30_000);

  it('after a failed attempt the leased jobs behind it go back instead of being sent', async () => {
    receiver.reset();
    // Retry-After of an hour: a failed job's next attempt cannot fall inside this test. (With the
    // backoff alone, full jitter draws the first retry anywhere in [0, base]: a draw of 0.8 s
    // once made a legitimate retry look like a given-back job being sent.)
    const release = heldAnswers({ status: 503, headers: { 'retry-after': '3600' } });
    const account = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/failing'));
    const posts = [];
    for (let i = 0; i < 10; i++) posts.push(await createPost(t, t.adminKey, { text: `fails ${i}`, targets: [{ accountId: account.id }] }));
    const ids = posts.map((p) => p.id);
    await receiver.waitFor(5, 10_000);
    // Five held at the receiver, five more leased behind them in the worker.
    await waitUntil(async () => (await jobRows(ids)).every((j) => j.status === 'in_progress'), 10_000, 'all ten jobs to be leased');
    release();
    await waitUntil(
      async () => (await jobRows(ids)).every((j) => j.status === 'scheduled' && j.attempt_count > 0),
      10_000,
      'every job to fail once',
    );
    await new Promise((r) => setTimeout(r, 1000));
    // The five jobs leased behind the failures went back without an attempt; the next rounds
    // sent them (the breaker is out of the way here). So: one attempt row per request the
    // receiver saw, every job attempted exactly once, none counted twice, none sent twice.
    const rows = await jobRows(ids);
    expect(receiver.requests).toHaveLength(10);
    expect(rows.map((j) => [j.attempt_count, j.attempts])).toEqual(rows.map(() => [1, 1]));
    expect(new Set(receiver.requests.map((r) => r.headers['idempotency-key']))).toEqual(new Set(rows.map((j) => j.id)));
  }, 30_000);
});
