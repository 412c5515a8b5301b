import { createTestDatabase, withClient } from '../support/database';
import { ENV_ADMIN_URL, requireEnv } from '../support/env';
import { Receiver, startReceiver } from '../support/receiver';
import { waitUntil } from '../support/poll';
import { CHAOS_KEY, deliveryReport, Fleet, post, sessionsOf, webhookAccounts } from './support/herald';
import { between, sleep } from './support/scale';
import { keepPosting, statusCounts, stopTraffic } from './support/traffic';

/**
 * A worker process frozen in the middle of a transaction (SIGSTOP: a VM paused, a process stuck
 * in a debugger or swapped out), resumed later (SIGCONT). Its session holds row locks while it is
 * stopped; the other process and the API must not wait for it. Herald's transactions carry
 * idle_in_transaction_session_timeout (DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS, 10 s by default):
 * the server ends the frozen session and its locks go with it; the frozen process's leases run
 * out and the other process takes its jobs over. Resumed, the frozen process finds its
 * connection gone (25P03) and carries on by itself.
 */

const IDLE_TIMEOUT_MS = 10_000; // the default, on purpose: what an operator gets

describe('a worker frozen mid-transaction (SIGSTOP … SIGCONT)', () => {
  const fleet = new Fleet();
  let receiver: Receiver | null = null;
  afterEach(async () => {
    await stopTraffic();
    await fleet.stopAll();
    await receiver?.close();
  });

  it('does not block the other process or the API, and rejoins when resumed', async () => {
    const { url } = await createTestDatabase();
    const adminUrl = requireEnv(ENV_ADMIN_URL);
    receiver = await startReceiver(() => ({ status: 200, delayMs: between(20, 120) }));
    const frozen = await fleet.start(url);
    const other = await fleet.start(url);
    const accounts = await webhookAccounts(other, [receiver.urlFor('/a'), receiver.urlFor('/b')], 8);
    // Work keeps coming, through the process that is never frozen.
    const posting = keepPosting(other, CHAOS_KEY, accounts, 5);
    await waitUntil(() => posting.accepted() >= 50, 30_000, 'the first posts');

    // SIGSTOP at random moments until the process is caught inside a transaction.
    const pid = frozen.child.pid!;
    let tries = 0;
    let held: number | null = null;
    while (held === null) {
      if (++tries > 2_000) throw new Error('never caught the worker inside a transaction');
      await sleep(between(0, 30));
      frozen.child.kill('SIGSTOP');
      await sleep(20);
      const open = (await sessionsOf(adminUrl, pid)).find((s) => s.state === 'idle in transaction');
      if (open) held = open.pid;
      else frozen.child.kill('SIGCONT');
    }
    const stoppedAt = Date.now();
    const acceptedBefore = posting.accepted();
    const receivedBefore = receiver.requests.length;

    // The server ends the frozen session after the timeout ...
    await waitUntil(
      () => withClient(adminUrl, async (db) => (await db.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [held])).rows.length === 0),
      IDLE_TIMEOUT_MS + 10_000,
      "the server to end the frozen process's transaction",
    );
    const sessionEndedMs = Date.now() - stoppedAt;
    // ... and everything accepted so far is delivered by the other process while this one is still stopped.
    const target = posting.accepted() + 20;
    await waitUntil(() => posting.accepted() >= target, 30_000, 'posts accepted while a worker is frozen');
    const whileFrozen = posting.tries.filter((t) => t.at >= stoppedAt);
    await posting.stop();
    await waitUntil(
      () => withClient(url, async (db) => (await db.query(`SELECT 1 FROM jobs WHERE status <> 'succeeded' LIMIT 1`)).rows.length === 0),
      60_000,
      'every accepted job delivered while a worker is frozen',
    );
    expect(frozen.running).toBe(true);
    const deliveredWhileFrozen = receiver.requests.length - receivedBefore;
    const frozenMs = Date.now() - stoppedAt;

    // Resumed: its transaction is gone (25P03); it answers and delivers again by itself.
    frozen.child.kill('SIGCONT');
    const resumedAt = Date.now();
    await frozen.waitReady(30_000);
    const afterResume = await post(frozen, accounts.slice(0, 4), 'after the freeze');
    expect(afterResume.status).toBe(201);
    await waitUntil(
      () => withClient(url, async (db) => (await db.query(`SELECT 1 FROM jobs WHERE status <> 'succeeded' LIMIT 1`)).rows.length === 0),
      60_000,
      'the jobs posted through the resumed process to be delivered',
    );
    expect(frozen.running && other.running).toBe(true);

    const accepted = [...posting.tries.flatMap((t) => t.jobIds), ...afterResume.jobIds];
    const report = await deliveryReport(url, receiver.requests);
    const slowest = Math.max(...whileFrozen.map((t) => t.ms));
    console.log(
      [
        `frozen process: caught inside a transaction after ${tries} SIGSTOP(s); frozen ${(frozenMs / 1000).toFixed(1)} s`,
        `  its session ended by the server after ${(sessionEndedMs / 1000).toFixed(1)} s (idle_in_transaction_session_timeout ${IDLE_TIMEOUT_MS / 1000} s)`,
        `  while frozen: ${deliveredWhileFrozen} requests delivered by the other process; ${whileFrozen.length} POST /v1/posts (${[...statusCounts(whileFrozen)].map(([s, n]) => `${n} × ${s}`).join(', ')}), slowest ${slowest} ms`,
        `  ${accepted.length} jobs accepted (${acceptedBefore} before the freeze), ${report.requests} requests, dropped ${report.dropped.length}, duplicates ${report.duplicates} (same key), foreign ${report.foreign}; resumed and ready ${((Date.now() - resumedAt) / 1000).toFixed(1)} s later`,
      ].join('\n'),
    );
    expect(report.jobs).toBe(accepted.length);
    expect(report.dropped).toEqual([]);
    expect(report.foreign).toBe(0);
    expect(sessionEndedMs).toBeLessThan(IDLE_TIMEOUT_MS + 10_000);
    // Every post during the freeze was answered, accepted, within the timeout and some margin.
    expect([...statusCounts(whileFrozen).keys()]).toEqual(['201']);
    expect(slowest).toBeLessThan(IDLE_TIMEOUT_MS + 5_000);
  });
});
