import { bearer, TestApp } from './support/app';
import { withClient } from './support/database';
import { bootEngine, createPost, createWebhookAccount } from './support/engine';
import { Receiver, startReceiver } from './support/receiver';
import { waitUntil } from './support/service';

/**
 * A worker leases up to 2 × an account's in-flight cap and starts the extra jobs as slots free.
 * Leased jobs that have not started must never outrun a person's decision or the breaker.
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

  const statuses = (postIds: string[]) =>
    withClient(t.databaseUrl, async (db) => {
      const { rows } = await db.query<{ status: string; attempt_count: number }>(
        `SELECT status, attempt_count FROM jobs WHERE post_id = ANY($1::uuid[])`,
        [postIds],
      );
      return rows;
    });

  it('disabling an account stops its leased jobs that have not started', async () => {
    receiver.respondWith({ status: 200, delayMs: 700 });
    const account = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/slow'));
    const posts = [];
    for (let i = 0; i < 12; i++) posts.push(await createPost(t, t.adminKey, { text: `queued ${i}`, targets: [{ accountId: account.id }] }));
    await receiver.waitFor(5, 10_000); // 5 running (the cap), more leased behind them
    await t.http().patch(`/v1/accounts/${account.id}`).set(bearer(t.adminKey)).send({ status: 'disabled' }).expect(200);
    const ids = posts.map((p) => p.id);
    await waitUntil(async () => (await statuses(ids)).every((j) => j.status === 'succeeded' || j.status === 'paused'), 10_000, 'jobs to settle');
    await new Promise((r) => setTimeout(r, 1000));
    // Only the attempts already running when the account was disabled reached the receiver.
    expect(receiver.requests).toHaveLength(5);
    const rows = await statuses(ids);
    expect(rows.filter((j) => j.status === 'succeeded')).toHaveLength(5);
    const paused = rows.filter((j) => j.status === 'paused');
    expect(paused).toHaveLength(7);
    expect(paused.every((j) => j.attempt_count === 0)).toBe(true); // given back without spending an attempt
  }, 30_000);

  it('after a failed attempt the leased jobs behind it go back instead of being sent', async () => {
    receiver.reset();
    receiver.respondWith({ status: 503, delayMs: 300 });
    const account = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/failing'), { retryPolicy: { baseDelayMs: 60_000, maxDelayMs: 60_000 } });
    const posts = [];
    for (let i = 0; i < 10; i++) posts.push(await createPost(t, t.adminKey, { text: `fails ${i}`, targets: [{ accountId: account.id }] }));
    await receiver.waitFor(5, 10_000);
    const ids = posts.map((p) => p.id);
    await waitUntil(async () => (await statuses(ids)).every((j) => j.status === 'scheduled'), 10_000, 'jobs to be back in the queue');
    await new Promise((r) => setTimeout(r, 1000));
    // Every job that failed waits a minute for its retry (the policy); the jobs that were leased
    // behind the failures went back without an attempt, and the next rounds sent them as the
    // breaker allowed. So: one attempt per request the receiver saw, none counted twice, and
    // none spent on a job that was given back.
    const rows = await statuses(ids);
    expect(rows.filter((j) => j.attempt_count === 1)).toHaveLength(receiver.requests.length);
    expect(rows.every((j) => j.attempt_count <= 1)).toBe(true);
    expect(new Set(receiver.requests.map((r) => r.headers['idempotency-key'])).size).toBe(receiver.requests.length);
  }, 30_000);
});
