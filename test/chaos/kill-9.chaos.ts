import { createTestDatabase } from '../support/database';
import { Receiver, startReceiver } from '../support/receiver';
import type { ServiceProcess } from '../support/process';
import { waitUntil } from '../support/poll';
import { deliveryReport, Fleet, jobStates, postMany, webhookAccounts } from './support/herald';
import { between, scaled, sleep } from './support/scale';

/**
 * kill -9 of a worker process at random moments, round after round, while posts keep flowing to
 * real receivers on loopback. Two worker processes deliver; the API process that accepts the
 * posts is never killed, so every 201 is a job that must arrive. After the last round: every
 * job's key reached a receiver (drop = 0), and every request carried the key of a job, the
 * same key on a duplicate as on the original (`webhook-id` = `Idempotency-Key` = the job's key).
 */

const POSTS = scaled(2_000, 200);
const ROUNDS = scaled(10, 3);

describe('kill -9 of worker processes while posts flow', () => {
  const fleet = new Fleet();
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await fleet.stopAll();
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  it(`${ROUNDS} rounds of kill -9 during ${POSTS} posts: nothing dropped, duplicates keep their key`, async () => {
    const { url } = await createTestDatabase();
    for (let i = 0; i < 3; i++) receivers.push(await startReceiver(() => ({ status: 200, delayMs: between(20, 150) })));
    const apiOnly = await fleet.start(url, { WORKER_ENABLED: 'false' });
    const accounts = await webhookAccounts(
      apiOnly,
      receivers.map((r) => r.urlFor('/hook')),
      12,
    );
    // Victims are chosen among the workers that are up (answer /health/ready): a kill -9 of a
    // process that is still starting would prove less.
    const ready = new Set<ServiceProcess>();
    const launch = async (wait: boolean): Promise<ServiceProcess> => {
      const s = await fleet.start(url, {}, wait);
      if (wait) ready.add(s);
      else
        s.waitReady(120_000).then(
          () => ready.add(s),
          () => undefined,
        );
      return s;
    };
    const workers: ServiceProcess[] = [await launch(true), await launch(true)];

    // Each round posts its share of the posts and kills a worker at a random moment while they
    // are accepted and delivered. The replacement is not waited for: while it starts, the other
    // worker delivers (or nobody does, and jobs wait).
    const posted: string[] = [];
    const kills: string[] = [];
    const perRound = Math.ceil(POSTS / ROUNDS);
    for (let round = 1; round <= ROUNDS; round++) {
      const chunk = postMany(apiOnly, accounts, Math.min(perRound, POSTS - posted.length), 4);
      await sleep(between(100, 1_500));
      await waitUntil(() => workers.some((w) => ready.has(w)), 120_000, 'a worker to be up');
      const up = workers.filter((w) => ready.has(w));
      const victim = up[between(0, up.length - 1)];
      const i = workers.indexOf(victim);
      const before = await jobStates(url);
      victim.child.kill('SIGKILL');
      expect(await victim.exited()).toBe(-1);
      kills.push(
        `round ${round}: killed worker ${i + 1} (pid ${victim.child.pid}) with ${before.in_progress ?? 0} jobs in progress, ${before.scheduled ?? 0} waiting, ${before.succeeded ?? 0} done`,
      );
      ready.delete(victim);
      workers[i] = await launch(false);
      posted.push(...(await chunk));
    }
    expect(posted).toHaveLength(POSTS);

    await waitUntil(async () => (await jobStates(url)).succeeded === POSTS, 120_000, `all ${POSTS} jobs to succeed`);
    const requests = receivers.flatMap((r) => r.requests);
    const report = await deliveryReport(url, requests);
    console.log(
      [
        `kill -9: ${ROUNDS} rounds during ${POSTS} posts to ${accounts.length} accounts on ${receivers.length} receivers (2 worker processes)`,
        ...kills.map((k) => `  ${k}`),
        `  ${report.jobs} jobs, ${report.requests} requests, dropped ${report.dropped.length}, duplicates ${report.duplicates} (each with its job's key), foreign ${report.foreign}`,
      ].join('\n'),
    );
    expect(report.jobs).toBe(POSTS);
    expect(report.dropped).toEqual([]);
    expect(report.foreign).toBe(0);
  });
});
