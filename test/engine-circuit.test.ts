import { bearer, TestApp } from './support/app';
import { bootEngine, createPost, createWebhookAccount, verifySignature } from './support/engine';
import { getAccount, getJobs, JobView, pollUntil, sleep } from './support/engine-watch';
import { Receiver, startReceiver } from './support/receiver';

/**
 * Protection of receivers (docs/delivery.md), against real PostgreSQL and real loopback receivers:
 * the per-account circuit breaker (open, defer without spending attempts, one probe per
 * cooldown, close on success), the per-account in-flight cap, and the automatic disable.
 */

const total = (jobs: JobView[]): number => jobs.reduce((n, j) => n + j.attemptCount, 0);

async function postMany(t: TestApp, key: string, accountId: string, n: number, label: string): Promise<string[]> {
  const posts = await Promise.all(
    Array.from({ length: n }, (_, i) => createPost(t, key, { text: `${label} ${i + 1}`, targets: [{ accountId }] })),
  );
  return posts.map((p) => p.jobs[0].id);
}

describe('publish engine: circuit breaker and in-flight cap', () => {
  // Long enough that the checks made "during the cooldown" (a second before its end) still fall
  // inside it on a loaded machine.
  const COOLDOWN = 4_000;
  const MARGIN = 1_000;
  let t: TestApp;
  let key: string;
  let receivers: Receiver[] = [];
  const receiver = async (): Promise<Receiver> => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    t = await bootEngine({ circuit: { failureThreshold: 5, cooldownMs: COOLDOWN, disableThreshold: 50 } });
    key = t.adminKey;
  });
  afterEach(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    receivers = [];
  });
  afterAll(async () => {
    await t.close();
  });

  it('opens after 5 transient failures, defers without attempts, sends one probe per cooldown, closes on success', async () => {
    const r = await receiver();
    let status = 503;
    r.setHandler(() => status);
    const account = await createWebhookAccount(t, key, r.urlFor('/hook'));
    const jobIds = await postMany(t, key, account.id, 10, 'Outage');

    // 1. Open.
    const opened = await pollUntil(
      'the circuit to open',
      () => getAccount(t, key, account.id),
      (a) => a.circuit.state === 'open',
    );
    expect(opened.circuit.consecutiveFailures).toBeGreaterThanOrEqual(5);
    expect(opened.status).toBe('active');
    const openUntil1 = Date.parse(opened.circuit.openUntil!);
    expect(openUntil1).toBeGreaterThan(Date.now());
    // Cooldowns are jittered: at least COOLDOWN, less than 1.5 × it (docs/delivery.md).
    expect(openUntil1 - Date.now()).toBeLessThan(1.5 * COOLDOWN);

    // Attempts that were already in flight finish and count; then nothing moves.
    const settled = await pollUntil(
      'in-flight attempts to finish',
      () => getJobs(t, key, jobIds),
      (jobs) => jobs.every((j) => j.status !== 'in_progress'),
    );
    const atOpen = r.requests.length;
    expect(atOpen).toBeGreaterThanOrEqual(5);
    expect(total(settled)).toBe(atOpen);
    expect(settled.every((j) => j.status === 'scheduled')).toBe(true);

    // 2. During the cooldown: every job is due, yet none is attempted and no attempt is spent.
    const window1 = openUntil1 - MARGIN - Date.now();
    expect(window1).toBeGreaterThan(500);
    await sleep(window1);
    expect(r.requests).toHaveLength(atOpen);
    const deferred = await getJobs(t, key, jobIds);
    expect(total(deferred)).toBe(atOpen);
    for (const j of deferred) {
      expect(j.status).toBe('scheduled');
      expect(Date.parse(j.nextAttemptAt!)).toBeLessThanOrEqual(Date.now());
    }
    expect((await getAccount(t, key, account.id)).circuit.state).toBe('open');

    // 3. After the cooldown: exactly one probe; it fails, so the circuit opens for another cooldown.
    await r.waitFor(atOpen + 1, MARGIN + 3_000);
    const probe1 = r.requests[atOpen];
    expect(probe1.receivedAt.getTime()).toBeGreaterThanOrEqual(openUntil1 - 20);
    const reopened = await pollUntil(
      'the circuit to re-open after the failed probe',
      () => getAccount(t, key, account.id),
      (a) => a.circuit.state === 'open' && Date.parse(a.circuit.openUntil!) > openUntil1,
    );
    const openUntil2 = Date.parse(reopened.circuit.openUntil!);
    expect(openUntil2 - probe1.receivedAt.getTime()).toBeGreaterThanOrEqual(COOLDOWN);
    expect(openUntil2 - probe1.receivedAt.getTime()).toBeLessThan(1.5 * COOLDOWN + 2_000);
    expect(reopened.circuit.consecutiveFailures).toBe(total(deferred) + 1);

    const window2 = openUntil2 - MARGIN - Date.now();
    expect(window2).toBeGreaterThan(500);
    await sleep(window2);
    expect(r.requests).toHaveLength(atOpen + 1);
    expect(total(await getJobs(t, key, jobIds))).toBe(atOpen + 1);

    // 4. The receiver recovers: the next probe succeeds, closes the circuit, and everything goes out.
    status = 200;
    const done = await pollUntil(
      'every job to succeed',
      () => getJobs(t, key, jobIds),
      (jobs) => jobs.every((j) => j.status === 'succeeded'),
      15_000,
    );
    const probe2 = r.requests[atOpen + 1];
    expect(probe2.receivedAt.getTime()).toBeGreaterThanOrEqual(openUntil2 - 20);
    // Until the probe's success was recorded, the probe was the only request let through.
    const successes = done.flatMap((j) => j.attempts.filter((a) => a.errorClass === 'success'));
    expect(successes).toHaveLength(10);
    const firstSuccess = Math.min(...successes.map((a) => Date.parse(a.finishedAt)));
    const beforeClose = r.requests.filter((q) => q.receivedAt.getTime() >= openUntil1 - 20 && q.receivedAt.getTime() <= firstSuccess);
    expect(beforeClose).toEqual([probe1, probe2]);

    const closed = await getAccount(t, key, account.id);
    expect(closed.circuit).toEqual({ state: 'closed', openUntil: null, consecutiveFailures: 0 });
    expect(closed.lastSuccessAt).not.toBeNull();
    // Every attempt reached the receiver, and no request was sent without an attempt row.
    expect(r.requests).toHaveLength(total(done));
    expect(done.reduce((n, j) => n + j.attempts.length, 0)).toBe(total(done));
  }, 45_000);

  it('keeps at most 5 attempts in flight per account, and runs them in parallel', async () => {
    const r = await receiver();
    let open = 0;
    let max = 0;
    r.setHandler(async () => {
      open += 1;
      max = Math.max(max, open);
      await sleep(300);
      open -= 1;
      return { status: 200, body: { id: 'ok' } };
    });
    const account = await createWebhookAccount(t, key, r.urlFor('/hook'));
    const jobIds = await postMany(t, key, account.id, 20, 'Burst');

    const done = await pollUntil(
      'every job to succeed',
      () => getJobs(t, key, jobIds),
      (jobs) => jobs.every((j) => j.status === 'succeeded'),
      20_000,
      100,
    );
    expect(done.every((j) => j.attempts.length === 1)).toBe(true);
    expect(r.requests).toHaveLength(20);
    expect(max).toBeLessThanOrEqual(5);
    expect(max).toBeGreaterThan(1);
  }, 30_000);
});

describe('publish engine: account disabled after consecutive failures', () => {
  let t: TestApp;
  let key: string;
  let receivers: Receiver[] = [];
  const receiver = async (): Promise<Receiver> => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    t = await bootEngine({ circuit: { failureThreshold: 1_000, cooldownMs: 1_000, disableThreshold: 3 } });
    key = t.adminKey;
  });
  afterEach(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    receivers = [];
  });
  afterAll(async () => {
    await t.close();
  });

  async function expectDisabledAndPaused(r: Receiver, accountId: string, jobIds: string[]): Promise<void> {
    const disabled = await pollUntil(
      'the account to be disabled',
      () => getAccount(t, key, accountId),
      (a) => a.status === 'disabled',
    );
    expect(disabled.statusReason).toEqual(expect.stringContaining('consecutive failed attempts'));
    expect(disabled.circuit.consecutiveFailures).toBeGreaterThanOrEqual(3);
    // Attempts in flight when it was disabled finish and count; then every job waits paused
    // (none left `scheduled` on an account that cannot be claimed, none dead).
    const settled = await pollUntil(
      'every job to be paused',
      () => getJobs(t, key, jobIds),
      (jobs) => jobs.every((j) => j.status === 'paused'),
      5_000,
    );
    expect(settled.every((j) => j.deadReason === null)).toBe(true);
    expect(r.requests).toHaveLength(total(settled));
    // Several poll intervals: nothing more is sent to a disabled account.
    await sleep(600);
    expect(r.requests).toHaveLength(total(settled));
    expect((await getJobs(t, key, jobIds)).map((j) => j.status)).toEqual(jobIds.map(() => 'paused'));
  }

  it('disables the account after 3 consecutive failures; its jobs wait paused and resume when enabled', async () => {
    const r = await receiver();
    let status = 503;
    r.setHandler(() => status);
    const account = await createWebhookAccount(t, key, r.urlFor('/hook'));
    const jobIds = await postMany(t, key, account.id, 6, 'Doomed');

    await expectDisabledAndPaused(r, account.id, jobIds);

    status = 200;
    const enabled = await t.http().patch(`/v1/accounts/${account.id}`).set(bearer(key)).send({ status: 'active' });
    expect(enabled.status).toBe(200);
    expect(enabled.body.status).toBe('active');
    expect(enabled.body.circuit).toEqual({ state: 'closed', openUntil: null, consecutiveFailures: 0 });
    const done = await pollUntil(
      'every job to succeed',
      () => getJobs(t, key, jobIds),
      (jobs) => jobs.every((j) => j.status === 'succeeded'),
    );
    for (const request of r.requests) verifySignature(account.secret, request);
    expect(r.requests).toHaveLength(total(done));
  }, 20_000);

  it('jobs whose attempts were still in flight when the account was disabled end paused too', async () => {
    const r = await receiver();
    // Answers spread out in time: the third failure disables the account while later
    // attempts are still waiting for their answer.
    r.setHandler((_request, n) => ({ status: 503, delayMs: 150 * n }));
    const account = await createWebhookAccount(t, key, r.urlFor('/hook'));
    const jobIds = await postMany(t, key, account.id, 5, 'Slow outage');

    await expectDisabledAndPaused(r, account.id, jobIds);
  }, 20_000);
});
