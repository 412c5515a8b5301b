import { bearer, TestApp } from './support/app';
import { withClient } from './support/database';
import { bootEngine, createPost, createWebhookAccount, fastEngine, waitForJob } from './support/engine';
import { JobView, pollUntil, sleep } from './support/engine-watch';
import { Receiver, startReceiver } from './support/receiver';

/**
 * Attempts and leases (issue "one owner", item 2). A worker renews the leases of the jobs it
 * holds every third of a lease, so an attempt slower than a lease is not taken over by another
 * process while it runs; and a success that comes back after its lease was lost anyway (the
 * worker could not reach the database long enough) is kept with its remote id.
 */
describe('attempts longer than a lease', () => {
  let apps: TestApp[] = [];
  let receivers: Receiver[] = [];
  const receiver = async (): Promise<Receiver> => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };
  afterEach(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await Promise.all(receivers.map((r) => r.close()));
    apps = [];
    receivers = [];
  });

  /**
   * A worker process of its own (an in-process Nest app with its worker) on `of`'s database, with
   * the same credentials key (hosts sharing a database must share HERALD_SECRET_KEY).
   */
  async function worker(of: TestApp | null, leaseMs: number): Promise<TestApp> {
    const engine = fastEngine();
    const app = await bootEngine(
      {
        circuit: { failureThreshold: 1000, cooldownMs: 30_000, disableThreshold: 1000 },
        http: { ...engine.http!, totalTimeoutMs: 8_000 },
        worker: { ...engine.worker!, leaseMs, attemptTimeoutMs: 10_000 },
        ...(of ? { secretKey: of.config.secretKey, bootstrapApiKey: of.config.bootstrapApiKey } : {}),
      },
      of?.databaseUrl,
    );
    apps.push(app);
    return app;
  }

  it('with a 1.5 s lease and a receiver that answers after 4 s, no job ever has two attempts in flight, and each success is kept', async () => {
    const first = await worker(null, 1_500);
    await worker(first, 1_500); // a second process, ready to take over any lease that lapses
    const r = await receiver();
    const inFlight = new Map<string, number>();
    let overlaps = 0;
    r.setHandler(async (req) => {
      const k = String(req.headers['idempotency-key']);
      const n = (inFlight.get(k) ?? 0) + 1;
      inFlight.set(k, n);
      if (n > 1) overlaps += 1;
      await sleep(4_000);
      inFlight.set(k, (inFlight.get(k) ?? 1) - 1);
      return { status: 200, body: { id: `remote-${k}`, url: `https://blog.example/${k}` } };
    });
    const account = await createWebhookAccount(first, first.adminKey, r.urlFor('/slow'));
    const posts = [];
    for (let i = 0; i < 6; i++)
      posts.push(await createPost(first, first.adminKey, { text: `slow ${i}`, targets: [{ accountId: account.id }] }));

    for (const p of posts) {
      const jobId = p.jobs[0].id;
      const job = await waitForJob<JobView>(first, first.adminKey, jobId, (j) => j.status === 'succeeded', 20_000);
      expect(job.remoteId).toBe(`remote-${jobId}`);
      expect(job.attempts.map((a) => [a.number, a.errorClass])).toEqual([[1, 'success']]);
    }
    await sleep(1_000);
    console.log(`lease renewal: 6 jobs, 4 s answers, 1.5 s lease, 2 workers: ${r.requests.length} requests, overlap ${overlaps}`);
    expect(overlaps).toBe(0);
    expect(r.requests).toHaveLength(6);
    const lost = await withClient(
      first.databaseUrl,
      async (db) => (await db.query(`SELECT count(*)::int AS n FROM attempts WHERE network_error = 'worker_lost'`)).rows[0].n,
    );
    expect(lost).toBe(0);
  }, 45_000);

  it('an outcome waiting behind a slow round keeps its lease: its job is not reclaimed, and not sent twice', async () => {
    const first = await worker(null, 1_500);
    await worker(first, 1_500); // a second process, whose crash recovery would take a lapsed lease over
    const r = await receiver();
    const answer = new Map<string, () => void>();
    r.setHandler(async (req) => {
      await new Promise<void>((resolve) => answer.set(String(req.headers['idempotency-key']), resolve));
      return { status: 200, body: { id: `remote-${String(req.headers['idempotency-key'])}` } };
    });
    const account = await createWebhookAccount(first, first.adminKey, r.urlFor('/slow-round'));
    const [a, b] = [
      (await createPost(first, first.adminKey, { text: 'first', targets: [{ accountId: account.id }] })).jobs[0].id,
      (await createPost(first, first.adminKey, { text: 'second', targets: [{ accountId: account.id }] })).jobs[0].id,
    ];
    await r.waitFor(2);

    // A slow round, made certain: the account's row is locked here, so the round recording a's
    // success waits for it (a round locks the accounts it touches). b's success comes back
    // meanwhile and waits in its worker for the next round, for three leases.
    await withClient(first.databaseUrl, async (db) => {
      await db.query('BEGIN');
      await db.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [account.id]);
      answer.get(a)!();
      await pollUntil(
        "the round recording a's outcome waiting for the account's lock",
        async () =>
          (
            await db.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          ).rows[0].n,
        (n: number) => n > 0,
      );
      answer.get(b)!();
      await r.waitFor(2);
      await sleep(4_500);
      await db.query('COMMIT');
    });

    for (const id of [a, b]) {
      const job = await waitForJob<JobView>(first, first.adminKey, id, (j) => j.status === 'succeeded');
      expect(job.remoteId).toBe(`remote-${id}`);
      expect(job.attempts.map((x) => [x.number, x.errorClass, x.networkError])).toEqual([[1, 'success', null]]);
    }
    await sleep(1_000);
    expect(r.requests.map((q) => q.headers['idempotency-key']).sort()).toEqual([a, b].sort());
  }, 30_000);

  it('a success that comes back after its lease was lost is kept: succeeded with its remote id, not dead, not sent again', async () => {
    // Leases of 30 s: the owner's first renewal would come after 10 s, so the test can make the
    // lease lapse in between, as a database away for a whole lease would.
    const owner = await worker(null, 30_000);
    const r = await receiver();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    r.setHandler(async () => {
      await held;
      return { status: 200, body: { id: 'late-remote-id', url: 'https://blog.example/late' } };
    });
    // One attempt in the budget: when the lease is reclaimed, the job dies (max_attempts), the
    // case where a person would requeue it and publish the post twice.
    const account = await createWebhookAccount(owner, owner.adminKey, r.urlFor('/late'), { retryPolicy: { maxAttempts: 1 } });
    const post = await createPost(owner, owner.adminKey, { text: 'published, but late to say so', targets: [{ accountId: account.id }] });
    const jobId = post.jobs[0].id;
    await r.waitFor(1);

    await withClient(owner.databaseUrl, (db) =>
      db.query(`UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [jobId]),
    );
    await worker(owner, 30_000); // another process: its crash recovery takes the lapsed lease over
    const reclaimed = await waitForJob<JobView>(owner, owner.adminKey, jobId, (j) => j.status === 'dead');
    expect(reclaimed).toMatchObject({ deadReason: 'max_attempts', remoteId: null });
    expect(reclaimed.attempts.map((a) => a.networkError)).toEqual(['worker_lost']);

    release();
    const job = await waitForJob<JobView>(owner, owner.adminKey, jobId, (j) => j.status === 'succeeded');
    expect(job).toMatchObject({
      remoteId: 'late-remote-id',
      remoteUrl: 'https://blog.example/late',
      deadReason: null,
      errorClass: 'success',
    });
    expect(job.attempts.map((a) => [a.number, a.errorClass, a.decision])).toEqual([
      [1, 'transient', 'dead'],
      [2, 'success', 'succeed'],
    ]);
    expect(job.attempts[1].message).toEqual(expect.stringContaining('after its lease was lost'));
    expect((await owner.http().get(`/v1/posts/${post.id}`).set(bearer(owner.adminKey))).body.status).toBe('published');
    // Not in the dead-letter queue any more: nobody can requeue it into a second publication.
    const requeue = await owner.http().post(`/v1/dlq/${jobId}/requeue`).set(bearer(owner.adminKey)).send({});
    expect(requeue.status).toBe(409);
    await sleep(500);
    expect(r.requests).toHaveLength(1);
  }, 30_000);
});
