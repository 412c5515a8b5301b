import { createTestDatabase, withClient } from './support/database';
import { pollUntil, sleep, waitUntil } from './support/poll';
import { ServiceProcess } from './support/process';
import { api, SERVICE_KEY as KEY, useServices } from './support/service';

/**
 * The real service (`node dist/src/main.js`) as child processes on one PostgreSQL database:
 * crash recovery with kill -9, two workers sharing a queue, the single half-open probe across
 * processes, and graceful shutdown.
 */
describe('the queue across processes', () => {
  const fleet = useServices();
  const startService = (databaseUrl: string, extra: Record<string, string> = {}) => fleet.start(databaseUrl, extra);
  const receiver = () => fleet.receiver();
  const accounts = (s: ServiceProcess, url: string, n: number, extra: Record<string, unknown> = {}) => fleet.accounts(s, url, n, extra);

  /** `posts` rounds of posts to every account (20 targets per post at most): posts × accounts jobs. */
  async function queue(s: ServiceProcess, accountIds: string[], posts: number): Promise<void> {
    for (let i = 0; i < posts; i++) {
      for (let from = 0; from < accountIds.length; from += 20) {
        const targets = accountIds.slice(from, from + 20).map((accountId) => ({ accountId }));
        const res = await api(s, KEY, 'POST', '/v1/posts', { text: `post ${i}`, targets });
        expect(res.status).toBe(201);
      }
    }
  }

  const jobStates = (url: string) =>
    withClient(url, async (db) => {
      const { rows } = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`);
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    });

  it('loses nothing when the service is killed with kill -9 mid-delivery (1,000 jobs)', async () => {
    const { url } = await createTestDatabase();
    const slow = await receiver();
    slow.respondWith({ status: 200, delayMs: 100 });
    // Queue everything while no worker runs, so the kill lands in the middle of delivery.
    const api1 = await startService(url, { WORKER_ENABLED: 'false' });
    const ids = await accounts(api1, slow.urlFor('/hook'), 20);
    await queue(api1, ids, 50);
    await api1.stop('SIGTERM');

    const first = await startService(url);
    await slow.waitFor(200, 30_000);
    expect(await first.stop('SIGKILL')).toBe(-1);
    const before = await jobStates(url);
    expect(before.succeeded ?? 0).toBeLessThan(1000); // really mid-delivery

    await startService(url);
    await waitUntil(async () => (await jobStates(url)).succeeded === 1000, 90_000, 'all 1,000 jobs to succeed');

    const keys = await withClient(url, async (db) =>
      (await db.query<{ key: string }>(`SELECT idempotency_key AS key FROM jobs`)).rows.map((r) => r.key),
    );
    const received = slow.requests.map((r) => String(r.headers['idempotency-key']));
    const receivedSet = new Set(received);
    const dropped = keys.filter((k) => !receivedSet.has(k));
    expect(dropped).toEqual([]);
    // Every request carried the key of a real job: duplicates reuse their job's key.
    expect(received.every((k) => keys.includes(k))).toBe(true);
    const duplicates = received.length - receivedSet.size;
    // Reported, not asserted: how many attempts were in flight when the process died.
    console.log(
      `kill -9 test: 1000 jobs, ${received.length} requests, ${duplicates} duplicates (same idempotency key), 0 dropped; ${before.succeeded ?? 0} were recorded before the kill`,
    );
    expect(duplicates).toBeLessThanOrEqual(1000 - (before.succeeded ?? 0));
  }, 300_000);

  it('two worker processes never run the same job at the same time, and deliver each once', async () => {
    const { url } = await createTestDatabase();
    const recv = await receiver();
    // Each answer takes 20 ms, so attempts of a job leased twice would overlap in time.
    recv.setHandler(async () => {
      await sleep(20);
      return 200;
    });
    // Both workers run before any job exists, so they race for the queue from the first post.
    // An account's jobs are leased by one process at a time; with 100 accounts and at most 40
    // jobs per process, both processes must take accounts.
    const env = { WORKER_CONCURRENCY: '40' };
    const [w1, w2] = await Promise.all([startService(url, env), startService(url, env)]);
    const ids = await accounts(w1, recv.urlFor('/hook'), 100);
    await queue(w1, ids, 4);
    await waitUntil(async () => (await jobStates(url)).succeeded === 400, 180_000, 'all 400 jobs to succeed');
    // Never the same job in two attempts at once, from whichever process: no two attempt rows of
    // a job overlap in time. (The receiver alone cannot say it: on a starved machine a request
    // can outlive Herald's request timeout, and the retry it causes, with the same idempotency
    // key, then arrives while the receiver still holds the first one. That is a retry after a
    // timeout, which the attempt rows show, not a job leased twice.)
    const overlapping = await withClient(
      url,
      async (db) =>
        (
          await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM attempts a JOIN attempts b ON a.job_id = b.job_id AND a.id < b.id
             WHERE a.started_at < b.finished_at AND b.started_at < a.finished_at`,
          )
        ).rows[0].n,
    );
    expect(overlapping).toBe(0);
    // Every request the receiver got is one attempt row (a job leased twice would send a request
    // whose attempt the lease check refuses to record), and every job arrived, each under its own key.
    const attemptRows = await withClient(
      url,
      async (db) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM attempts`)).rows[0].n,
    );
    const received = recv.requests.map((r) => String(r.headers['idempotency-key']));
    expect(received).toHaveLength(attemptRows);
    expect(new Set(received).size).toBe(400);
    // One success per job: any attempt beyond the 400 is a retry after a failed one.
    const successes = await withClient(
      url,
      async (db) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM attempts WHERE decision = 'succeed'`)).rows[0].n,
    );
    expect(successes).toBe(400);
    const byWorker = await withClient(
      url,
      async (db) => (await db.query<{ worker: string; n: number }>(`SELECT worker, count(*)::int AS n FROM attempts GROUP BY worker`)).rows,
    );
    // Both processes took part.
    expect(byWorker).toHaveLength(2);
    expect(w1.running && w2.running).toBe(true);
  }, 300_000);

  it('sends exactly one half-open probe per cooldown to a receiver that is down, across two processes', async () => {
    const { url } = await createTestDatabase();
    // Each answer takes 200 ms, so two requests in flight at once would be seen overlapping.
    let inFlight = 0;
    let overlapping = 0;
    const down = await receiver();
    down.setHandler(async () => {
      inFlight += 1;
      if (inFlight > 1) overlapping += 1;
      await sleep(200);
      inFlight -= 1;
      return 503;
    });
    const cooldownMs = 1000;
    const env = {
      CIRCUIT_COOLDOWN_MS: String(cooldownMs),
      RETRY_BASE_DELAY_MS: '10',
      RETRY_MAX_DELAY_MS: '20',
      RETRY_MAX_ATTEMPTS: '1000',
    };
    const a = await startService(url, { ...env, WORKER_ENABLED: 'false' });
    // One attempt at a time on this account: then the burst that opens the circuit is exactly its
    // 5 failures (a job leased behind a failed attempt goes back unattempted, and the round that
    // records the 5th failure opens the circuit before it claims), and every later request is a
    // probe. With more in flight, attempts already running when the circuit opened would come
    // after it, and telling them from probes took arrival-time gaps that a loaded machine broke.
    // (Several attempts in flight and one probe among them: engine-circuit.test.ts.)
    const [accountId] = await accounts(a, down.urlFor('/hook'), 1, { maxInFlight: 1 });
    await queue(a, [accountId], 30);
    await a.stop('SIGTERM');
    await Promise.all([startService(url, env), startService(url, env)]);

    // The burst, then three probes: each waits for its cooldown, so this takes 3 to 4.5 s plus
    // a poll interval each; the deadline is for a loaded machine.
    const burst = 5;
    const probes = 3;
    await down.waitFor(burst + probes, 60_000);
    const circuit = await pollUntil(
      'the circuit to be open again after the third probe failed',
      () =>
        withClient(url, async (db) => (await db.query(`SELECT circuit_state AS state, consecutive_failures AS n FROM accounts`)).rows[0]),
      (row: { state: string; n: number }) => row.state === 'open' && row.n >= burst + probes,
    );
    expect(circuit.state).toBe('open');
    const times = down.requests.map((r) => r.receivedAt.getTime());
    // Never two requests at once, from whichever process.
    expect(overlapping).toBe(0);
    // Every request after the burst is a probe a full cooldown (jittered: 1 to 1.5 s, see
    // circuit-breaker.ts) after the previous request's failure, whichever process sends it. A
    // failure is recorded after its request arrived, so the gap between arrivals is at least
    // the cooldown plus the 200 ms answer.
    const gaps = times.slice(burst).map((t, i) => t - times[burst + i - 1]);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(cooldownMs + 200 - 20);
    // One attempt row per request: no probe was counted twice or sent without a row.
    const attempts = await withClient(url, async (db) => (await db.query(`SELECT count(*)::int AS n FROM attempts`)).rows[0].n);
    expect(attempts).toBeGreaterThanOrEqual(down.requests.length - 1); // the last one's failure may still be on its way
    expect(attempts).toBeLessThanOrEqual(down.requests.length);
    // Three service starts and a minute of probes: the deadline is for a loaded machine.
  }, 300_000);

  it('on SIGTERM lets the attempt in flight finish and records it before exiting', async () => {
    const { url } = await createTestDatabase();
    const slow = await receiver();
    slow.respondWith({ status: 200, delayMs: 1500 });
    const s = await startService(url, { WORKER_SHUTDOWN_GRACE_MS: '5000' });
    const [accountId] = await accounts(s, slow.urlFor('/hook'), 1);
    await queue(s, [accountId], 1);
    await slow.waitFor(1, 30_000);
    const code = await s.stop('SIGTERM');
    expect(code).toBe(0);
    expect(await jobStates(url)).toEqual({ succeeded: 1 });
    expect(slow.requests).toHaveLength(1);
  }, 300_000);

  it('on SIGTERM past the grace period aborts the attempt, records it, and another process finishes the job', async () => {
    const { url } = await createTestDatabase();
    const slow = await receiver();
    slow.respondSequence([{ status: 200, delayMs: 5000 }, 200]);
    const s = await startService(url, { WORKER_SHUTDOWN_GRACE_MS: '300' });
    const [accountId] = await accounts(s, slow.urlFor('/hook'), 1);
    await queue(s, [accountId], 1);
    await slow.waitFor(1, 30_000);
    expect(await s.stop('SIGTERM')).toBe(0);
    const attempts = await withClient(
      url,
      async (db) => (await db.query(`SELECT number, error_class, decision, network_error FROM attempts ORDER BY number`)).rows,
    );
    expect(attempts).toEqual([expect.objectContaining({ number: 1, error_class: 'transient', decision: 'retry' })]);
    expect(await jobStates(url)).toEqual({ scheduled: 1 });
    await startService(url);
    await waitUntil(async () => (await jobStates(url)).succeeded === 1, 120_000, 'the job to succeed on the second process');
  }, 300_000);
});
