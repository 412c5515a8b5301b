import type { JobView } from '../src/jobs/job.types';
import { answerOf } from './support/medium';
import { useMediumEngine } from './support/medium-engine';
import { pollUntil, sleep } from './support/poll';
import { Receiver, verifySignature } from './support/receiver';

/**
 * Protection of receivers (docs/delivery.md), against real PostgreSQL and real loopback receivers:
 * the per-account circuit breaker (open, defer without spending attempts, one probe per
 * cooldown, close on success), the per-account in-flight cap, and the automatic disable.
 *
 * Nothing here sleeps before checking that nothing happened: what the cooldown holds back is read
 * off the receiver's arrival times against the circuit's openUntil (a bound of the design, not of
 * the machine's speed), and "nothing more goes to a disabled account" is checked after a barrier
 * delivery (the fixture's barrier) proved a claim round ran. Medium tests (./support/medium-engine.ts):
 * the worker and the services a post goes through, no HTTP.
 */

const total = (jobs: JobView[]): number => jobs.reduce((n, j) => n + j.attemptCount, 0);

describe('publish engine: circuit breaker and in-flight cap', () => {
  const COOLDOWN = 4_000;
  const engine = useMediumEngine({ circuit: { failureThreshold: 5, cooldownMs: COOLDOWN, disableThreshold: 50 } });

  it('opens after 5 transient failures, defers without attempts, sends one probe per cooldown, closes on success', async () => {
    // 503 until the second probe: the request with this index and later ones get a 200 (set
    // once the burst that opened the circuit has settled, long before its first probe).
    let firstSuccess = Number.POSITIVE_INFINITY;
    const r = await engine.receiver((_request, n) => (n >= firstSuccess ? 200 : 503));
    const account = await engine.account(r.urlFor('/hook'));
    const jobIds = await engine.postMany(account.id, 10, 'Outage');

    // 1. Open.
    const opened = await pollUntil(
      'the circuit to open',
      () => engine.accountView(account.id),
      (a) => a.circuit.state === 'open',
    );
    expect(opened.circuit.consecutiveFailures).toBeGreaterThanOrEqual(5);
    expect(opened.status).toBe('active');
    const openUntil1 = Date.parse(opened.circuit.openUntil!);

    // Attempts that were already in flight finish and count; then every job waits, due within the cooldown.
    const settled = await pollUntil(
      'in-flight attempts to finish',
      () => engine.jobs(jobIds),
      (jobs) => jobs.every((j) => j.status !== 'in_progress'),
    );
    const atOpen = r.requests.length;
    firstSuccess = atOpen + 1; // the first probe fails, the second succeeds
    expect(atOpen).toBeGreaterThanOrEqual(5);
    expect(total(settled)).toBe(atOpen);
    expect(settled.every((j) => j.status === 'scheduled')).toBe(true);
    expect(settled.every((j) => Date.parse(j.nextAttemptAt!) < openUntil1)).toBe(true);

    // 2. The cooldown: every job was due, yet the next request is the probe, at openUntil. It
    // fails, so the circuit opens for another cooldown; no attempt was spent meanwhile.
    await r.waitFor(atOpen + 1, 2 * COOLDOWN + 30_000);
    const probe1 = r.requests[atOpen];
    expect(probe1.receivedAt.getTime()).toBeGreaterThanOrEqual(openUntil1 - 20);
    const reopened = await pollUntil(
      'the circuit to re-open after the failed probe',
      () => engine.accountView(account.id),
      (a) => a.circuit.state === 'open' && Date.parse(a.circuit.openUntil!) > openUntil1,
    );
    const openUntil2 = Date.parse(reopened.circuit.openUntil!);
    expect(openUntil2 - probe1.receivedAt.getTime()).toBeGreaterThanOrEqual(COOLDOWN);
    expect(openUntil2 - probe1.receivedAt.getTime()).toBeLessThan(1.5 * COOLDOWN + 2_000);
    expect(reopened.circuit.consecutiveFailures).toBe(atOpen + 1);
    expect(total(await engine.jobs(jobIds))).toBe(atOpen + 1);

    // 3. The receiver recovers: the next probe, at openUntil2, succeeds, closes the circuit, and everything goes out.
    const done = await pollUntil(
      'every job to succeed',
      () => engine.jobs(jobIds),
      (jobs) => jobs.every((j) => j.status === 'succeeded'),
      2 * COOLDOWN + 30_000,
    );
    const probe2 = r.requests[atOpen + 1];
    expect(probe2.receivedAt.getTime()).toBeGreaterThanOrEqual(openUntil2 - 20);
    // Until the probe's success was recorded, the probe was the only request let through.
    const successes = done.flatMap((j) => j.attempts.filter((a) => a.errorClass === 'success'));
    expect(successes).toHaveLength(10);
    const closedAt = Math.min(...successes.map((a) => Date.parse(a.finishedAt)));
    const beforeClose = r.requests.slice(atOpen).filter((q) => q.receivedAt.getTime() <= closedAt);
    expect(beforeClose).toEqual([probe1, probe2]);

    const closed = await engine.accountView(account.id);
    expect(closed.circuit).toEqual({ state: 'closed', openUntil: null, consecutiveFailures: 0 });
    expect(closed.lastSuccessAt).not.toBeNull();
    // Every attempt reached the receiver, and no request was sent without an attempt row.
    expect(r.requests).toHaveLength(total(done));
    expect(done.reduce((n, j) => n + j.attempts.length, 0)).toBe(total(done));
  }, 90_000);

  it('keeps at most 5 attempts in flight per account, and runs them in parallel', async () => {
    const r = await engine.receiver();
    let open = 0;
    let max = 0;
    r.setHandler(async () => {
      open += 1;
      max = Math.max(max, open);
      await sleep(300);
      open -= 1;
      return { status: 200, body: { id: 'ok' } };
    });
    const account = await engine.account(r.urlFor('/hook'));
    const jobIds = await engine.postMany(account.id, 20, 'Burst');

    const done = await pollUntil(
      'every job to succeed',
      () => engine.jobs(jobIds),
      (jobs) => jobs.every((j) => j.status === 'succeeded'),
    );
    expect(done.every((j) => j.attempts.length === 1)).toBe(true);
    expect(r.requests).toHaveLength(20);
    expect(max).toBeLessThanOrEqual(5);
    expect(max).toBeGreaterThan(1);
  }, 60_000);
});

describe('publish engine: account disabled after consecutive failures', () => {
  const engine = useMediumEngine({ circuit: { failureThreshold: 1_000, cooldownMs: 1_000, disableThreshold: 3 } });

  async function expectDisabledAndPaused(r: Receiver, accountId: string, jobIds: string[]): Promise<void> {
    const disabled = await pollUntil(
      'the account to be disabled',
      () => engine.accountView(accountId),
      (a) => a.status === 'disabled',
    );
    expect(disabled.statusReason).toEqual(expect.stringContaining('consecutive failed attempts'));
    expect(disabled.circuit.consecutiveFailures).toBeGreaterThanOrEqual(3);
    // Attempts in flight when it was disabled finish and count; then every job waits paused
    // (none left `scheduled` on an account that cannot be claimed, none dead).
    const settled = await pollUntil(
      'every job to be paused',
      () => engine.jobs(jobIds),
      (jobs) => jobs.every((j) => j.status === 'paused'),
    );
    expect(settled.every((j) => j.deadReason === null)).toBe(true);
    expect(r.requests).toHaveLength(total(settled));
    // A claim round ran since: nothing more was sent to the disabled account, no attempt spent.
    await engine.barrier();
    expect(r.requests).toHaveLength(total(settled));
    const after = await engine.jobs(jobIds);
    expect(after.map((j) => j.status)).toEqual(jobIds.map(() => 'paused'));
    expect(total(after)).toBe(total(settled));
  }

  it('disables the account after 3 consecutive failures; its jobs wait paused and resume when enabled', async () => {
    let status = 503;
    const r = await engine.receiver(() => status);
    const account = await engine.account(r.urlFor('/hook'));
    const jobIds = await engine.postMany(account.id, 6, 'Doomed');

    await expectDisabledAndPaused(r, account.id, jobIds);

    status = 200;
    const enabled = await answerOf(engine.updateAccount(account.id, { status: 'active' }));
    expect(enabled.status).toBe(200);
    expect(enabled.body?.status).toBe('active');
    expect(enabled.body?.circuit).toEqual({ state: 'closed', openUntil: null, consecutiveFailures: 0 });
    const done = await pollUntil(
      'every job to succeed',
      () => engine.jobs(jobIds),
      (jobs) => jobs.every((j) => j.status === 'succeeded'),
    );
    for (const request of r.requests) verifySignature(account.secret, request);
    expect(r.requests).toHaveLength(total(done));
  }, 60_000);

  it('jobs whose attempts were still in flight when the account was disabled end paused too', async () => {
    // Answers spread out in time: the third failure disables the account while later
    // attempts are still waiting for their answer.
    const r = await engine.receiver((_request, n) => ({ status: 503, delayMs: 150 * n }));
    const account = await engine.account(r.urlFor('/hook'));
    const jobIds = await engine.postMany(account.id, 5, 'Slow outage');

    await expectDisabledAndPaused(r, account.id, jobIds);
  }, 60_000);
});
