import type { HeraldConfig } from '../src/config/config';
import { TestApp } from './support/app';
import { withClient } from './support/database';
import { createPost, createWebhookAccount, JobView, useEngine, waitForJob } from './support/engine';
import { pollUntil, sleep } from './support/poll';
import { bearer, fastEngine, NO_BREAKER } from './support/config';

/**
 * Attempts and leases (issue "one owner", item 2). A worker renews the leases of the jobs it
 * holds every third of a lease, so an attempt slower than a lease is not taken over by another
 * process while it runs; and a success that comes back after its lease was lost anyway (the
 * worker could not reach the database long enough) is kept with its remote id.
 *
 * A job taken over by another process leaves a `worker_lost` attempt in its history, and only a
 * job taken over can be sent a second time: so once a job is finished, its history proves whether
 * anything more can reach the receiver, without waiting "a while" to see.
 */
describe('attempts longer than a lease', () => {
  // Leases of 6 s, renewed every 2 s: an attempt still stops when renewals fall behind by more
  // than a lease less its margin (1.5 s), and with 1.5 s leases a machine at load 30 starved the
  // worker that long (attempts then ended as attempt_deadline, by design). The receiver answers
  // after 10 s, well past a lease.
  const LEASE = 6_000;
  const ANSWER = 10_000;
  const engine = useEngine(() => leases(LEASE));

  /** Leases of `leaseMs`, slow receivers allowed for (30 s requests, 40 s attempts), the breaker out of the way. */
  function leases(leaseMs: number): Partial<HeraldConfig> {
    const fast = fastEngine();
    return {
      circuit: NO_BREAKER,
      http: { ...fast.http!, totalTimeoutMs: 30_000 },
      worker: { ...fast.worker!, leaseMs, attemptTimeoutMs: 40_000 },
    };
  }

  /** Attempts lost with their lease (taken over by another process) among `jobIds`. */
  const lostAttempts = async (jobIds: string[], on: TestApp = engine.t) =>
    (
      await engine.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM attempts WHERE network_error = 'worker_lost' AND job_id = ANY($1::uuid[])`,
        [jobIds],
        on,
      )
    )[0].n;

  it('with a 6 s lease and a receiver that answers after 10 s, no job ever has two attempts in flight, and each success is kept', async () => {
    await engine.worker(leases(LEASE)); // a second process, ready to take over any lease that lapses
    const r = await engine.receiver();
    const inFlight = new Map<string, number>();
    let overlaps = 0;
    r.setHandler(async (req) => {
      const k = String(req.headers['idempotency-key']);
      const n = (inFlight.get(k) ?? 0) + 1;
      inFlight.set(k, n);
      if (n > 1) overlaps += 1;
      await sleep(ANSWER);
      inFlight.set(k, (inFlight.get(k) ?? 1) - 1);
      return { status: 200, body: { id: `remote-${k}`, url: `https://blog.example/${k}` } };
    });
    const account = await engine.account(r.urlFor('/slow'));
    const posts = [];
    for (let i = 0; i < 6; i++) posts.push(await engine.post({ text: `slow ${i}`, targets: [{ accountId: account.id }] }));

    const jobIds = posts.map((p) => p.jobs[0].id);
    for (const jobId of jobIds) {
      const job = await engine.waitForJob(jobId, (j) => j.status === 'succeeded', 60_000);
      expect(job.remoteId).toBe(`remote-${jobId}`);
      expect(job.attempts.map((a) => [a.number, a.errorClass])).toEqual([[1, 'success']]);
    }
    // Every job finished, none ever taken over: nothing more can reach the receiver.
    expect(await lostAttempts(jobIds)).toBe(0);
    expect(overlaps).toBe(0);
    expect(r.requests).toHaveLength(6);
  }, 180_000);

  it('an outcome waiting behind a slow round keeps its lease: its job is not reclaimed, and not sent twice', async () => {
    const first = engine.t;
    await engine.worker(leases(LEASE)); // a second process, whose crash recovery would take a lapsed lease over
    const r = await engine.receiver();
    const answer = new Map<string, () => void>();
    r.setHandler(async (req) => {
      await new Promise<void>((resolve) => answer.set(String(req.headers['idempotency-key']), resolve));
      return { status: 200, body: { id: `remote-${String(req.headers['idempotency-key'])}` } };
    });
    const account = await engine.account(r.urlFor('/slow-round'));
    const [a, b] = [
      (await engine.post({ text: 'first', targets: [{ accountId: account.id }] })).jobs[0].id,
      (await engine.post({ text: 'second', targets: [{ accountId: account.id }] })).jobs[0].id,
    ];
    await r.waitFor(2, 30_000);

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
      // b's lease when its answer came back: the test holds the lock until the database clock is
      // a whole lease past it. Without renewals, the second process's crash recovery (every
      // 100 ms) would have taken b over by then; with them, b's lease has moved on.
      const [{ until }] = await engine.sql<{ until: Date }>(`SELECT lease_expires_at AS until FROM jobs WHERE id = $1`, [b]);
      answer.get(b)!();
      const renewed = await pollUntil(
        "b's first lease to be a whole lease behind, on the database's clock",
        async () =>
          (
            await engine.sql<{ past: boolean; until: Date }>(
              `SELECT now() > $2::timestamptz + $3 * interval '1 millisecond' AS past, lease_expires_at AS until FROM jobs WHERE id = $1`,
              [b, until, LEASE],
            )
          )[0],
        (row) => row.past,
      );
      expect(renewed.until.getTime()).toBeGreaterThan(until.getTime());
      await db.query('COMMIT');
    });

    for (const id of [a, b]) {
      const job = await engine.waitForJob(id, (j) => j.status === 'succeeded');
      expect(job.remoteId).toBe(`remote-${id}`);
      expect(job.attempts.map((x) => [x.number, x.errorClass, x.networkError])).toEqual([[1, 'success', null]]);
    }
    // Both finished and never taken over (no worker_lost attempt): nothing more can be sent.
    expect(await lostAttempts([a, b])).toBe(0);
    expect(r.requests.map((q) => q.headers['idempotency-key']).sort()).toEqual([a, b].sort());
  }, 180_000);

  it('a success that comes back after its lease was lost is kept: succeeded with its remote id, not dead, not sent again', async () => {
    // Leases of 30 s: the owner's first renewal would come after 10 s, so the test can make the
    // lease lapse in between, as a database away for a whole lease would.
    const owner = await engine.worker(leases(30_000), null); // a database of its own: the file's 6 s workers stay out of it
    const r = await engine.receiver();
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
      db.query(`UPDATE job_state SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, [jobId]),
    );
    await engine.worker(leases(30_000), owner); // another process: its crash recovery takes the lapsed lease over
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
    // Finished, and the one takeover already in its history: nothing can send it again.
    expect(r.requests).toHaveLength(1);
  }, 60_000);
});
