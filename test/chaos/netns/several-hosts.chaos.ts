import { waitUntil } from '../../support/poll';
import { Cluster, deliveryFigures } from './support/cluster';
import { CHAOS_SCALE, scaled } from '../support/scale';

/**
 * Several hosts: three Herald processes, each in a network namespace of its own, sharing one
 * PostgreSQL on the machine's side of their links. One host is cut off in the middle of delivery:
 * its leases run out, the other two take its accounts over, nothing accepted is lost, the cut host
 * claims nothing while cut and comes back by itself when its link does.
 *
 * CHAOS_SCALE (default 1) scales the number of posts; CI runs it at 0.2.
 */
const LEASE_MS = 3_000;
const ACCOUNTS = 12;

const workerEnv = {
  WORKER_POLL_INTERVAL_MS: '200',
  WORKER_SWEEP_INTERVAL_MS: '2000',
  WORKER_LEASE_MS: String(LEASE_MS),
  // Room for 2 accounts' worth of jobs per process (5 in flight + 5 waiting each): with 12
  // accounts all three hosts take part.
  WORKER_CONCURRENCY: '20',
  HTTP_CONNECT_TIMEOUT_MS: '1000',
  HTTP_TOTAL_TIMEOUT_MS: '2000',
  WORKER_ATTEMPT_TIMEOUT_MS: '2000',
  RETRY_BASE_DELAY_MS: '50',
  RETRY_MAX_DELAY_MS: '500',
  RETRY_MAX_ATTEMPTS: '50',
};

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

describe('several hosts sharing one PostgreSQL', () => {
  let cluster: Cluster | null = null;

  afterEach(async () => {
    await cluster?.close();
    cluster = null;
  });

  it.each([
    ['its link is cut', 'link'],
    ['only its database is out of reach (receivers still are)', 'database'],
  ] as const)(
    'a host whose %s: its leases expire, the others take over, drop = 0, it claims nothing while cut and rejoins',
    async (_what, mode) => {
      const c = (cluster = await Cluster.create(3));
      const receiver = await c.receiver();
      receiver.respondWith({ status: 200, delayMs: 200 });
      const services = await Promise.all([1, 2, 3].map((i) => c.start(i, workerEnv)));
      const h3 = services[2];
      const ids = await c.accounts(h3, receiver, ACCOUNTS);
      const posts = scaled(100, 30);
      const total = ACCOUNTS * posts;
      await c.queue(h3, ids, posts);

      // Mid-delivery: the victim is a host that has delivered some and holds leases right now
      // (which hosts take which accounts is up to the claims).
      let victim = 0;
      await waitUntil(
        async () => {
          for (const [i, s] of services.entries()) {
            if (!receiver.requests.some((r) => c.sender(r) === i + 1)) continue;
            const held = await c.sql(`SELECT 1 FROM jobs WHERE status = 'in_progress' AND lease_owner LIKE $1`, [c.ownerPattern(s)]);
            if (held.length > 0) {
              victim = i + 1;
              return true;
            }
          }
          return false;
        },
        60_000,
        'a host to be delivering',
      );
      const h1 = services[victim - 1];
      const h2 = services[victim % 3];
      const cutAt = Date.now();
      if (mode === 'link') await c.topology.cut(victim);
      else await c.topology.partitionDatabase(victim);
      const heldAtCut = await c.sql<{ account_id: string; n: number }>(
        `SELECT account_id, count(*)::int AS n FROM jobs WHERE status = 'in_progress' AND lease_owner LIKE $1 GROUP BY account_id`,
        [c.ownerPattern(h1)],
      );
      const doneAtCut = (await c.jobStates()).succeeded ?? 0;

      // The two others finish everything while the cut host is still cut off.
      await waitUntil(
        async () => (await c.jobStates()).succeeded === total,
        120_000,
        `all ${total} jobs to succeed without host ${victim}`,
      ).catch(async (err) => {
        console.log(
          JSON.stringify(await c.jobStates()),
          JSON.stringify(
            await c.sql(
              `SELECT status, lease_owner, lease_expires_at, run_at, now() AS now, count(*)::int FROM jobs WHERE status <> 'succeeded' GROUP BY 1,2,3,4`,
            ),
          ),
          JSON.stringify(
            await c.sql(
              `SELECT client_addr, application_name, state, wait_event_type, wait_event, xact_start, left(query, 80) AS q FROM pg_stat_activity WHERE state <> 'idle'`,
            ),
          ),
          h2.text().slice(-5000),
          h3.text().slice(-5000),
        );
        throw err;
      });
      const othersDoneAt = Date.now();
      // Stay cut a while longer: a process that kept claiming or sending would show now.
      const cutFor = Math.max(3 * LEASE_MS, 2 * LEASE_MS + (othersDoneAt - cutAt));
      await new Promise((r) => setTimeout(r, Math.max(0, cutAt + cutFor - Date.now())));

      const reclaimed = await c.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM attempts WHERE network_error = 'worker_lost' AND worker LIKE $1`,
        [c.ownerPattern(h1)],
      );
      const heldAccounts = heldAtCut.map((a) => a.account_id);
      // Each account the cut host held at the cut was then served by another host (the account is the path).
      const takenOver = heldAccounts.filter((accountId) =>
        receiver.requests.some(
          (r) => r.path === `/hook/${ids.indexOf(accountId)}` && r.receivedAt.getTime() > cutAt && c.sender(r) !== victim,
        ),
      );

      const restoredAt = Date.now();
      if (mode === 'link') await c.topology.restore(victim);
      else await c.topology.healDatabase(victim);
      await h1.waitReady(60_000);
      const readyAfter = Date.now() - restoredAt;
      const logAtReady = h1.output.length;

      // Claims again: posts keep coming until the cut host has delivered some of them (the others are
      // quick too: a host that rejoined takes its share at the next claim, not all of it).
      const before = receiver.requests.length;
      let posts2 = 0;
      let firstFromVictim = 0;
      const rejoinDeadline = Date.now() + 60_000;
      while (Date.now() < rejoinDeadline) {
        await c.queue(h2, ids, 1, `after ${posts2}`);
        posts2 += 1;
        await new Promise((r) => setTimeout(r, 200));
        const first = receiver.requests.slice(before).find((r) => c.sender(r) === victim);
        if (first) {
          firstFromVictim = first.receivedAt.getTime();
          break;
        }
      }
      await waitUntil(
        async () => (await c.jobStates()).succeeded === total + ACCOUNTS * posts2,
        120_000,
        'the posts after the rejoin to be delivered',
      );
      const second = receiver.requests.slice(before);
      const fromVictimAfter = second.filter((r) => c.sender(r) === victim).length;
      const claimsAfter = firstFromVictim === 0 ? 'never' : `${seconds(firstFromVictim - restoredAt)} s`;
      // No error loop once back: the round that was waiting on a connection the server ended
      // during the cut fails once and is retried; once the cut host delivers again, nothing more.
      const errorsAfter = h1.output
        .slice(logAtReady)
        .join('')
        .split('\n')
        .filter((line) => /"level":(50|60)/.test(line))
        .map((line) => JSON.parse(line) as { time: number; msg: string });
      const errorsOnceBack = errorsAfter.filter((e) => e.time > firstFromVictim);

      // Nothing from the cut host reached a receiver once its leases could have run out, whether it
      // could reach it or not (a request written before the cut and retransmitted after it, or
      // sent by a process that kept going without its database, would show here).
      const lateFromVictim = receiver.requests.filter(
        (r) => c.sender(r) === victim && r.receivedAt.getTime() > cutAt + LEASE_MS && r.receivedAt.getTime() < restoredAt,
      );
      const figures = await deliveryFigures(c, receiver.requests);
      const bySender = [1, 2, 3].map((i) => receiver.requests.filter((r) => c.sender(r) === i).length);
      console.log(
        [
          `several hosts, host ${victim} ${mode === 'link' ? 'link cut' : 'cut from its database only'} (CHAOS_SCALE=${CHAOS_SCALE}, lease ${LEASE_MS} ms):`,
          `  ${total} + ${ACCOUNTS * posts2} jobs, ${figures.requests} requests, ${figures.duplicates} duplicates (each with its job's own idempotency key: ${figures.wrongKey === 0}), ${figures.dropped.length} dropped`,
          `  at the cut: ${doneAtCut} succeeded; host ${victim} held leases on ${heldAtCut.reduce((n, a) => n + a.n, 0)} jobs of ${heldAccounts.length} accounts`,
          `  the other hosts finished all ${total} jobs ${seconds(othersDoneAt - cutAt)} s after the cut; ${reclaimed[0].n} of host ${victim}'s jobs reclaimed (worker_lost); ${takenOver.length}/${heldAccounts.length} of its accounts served by another host`,
          `  requests by host: ${bySender.join(' / ')}; from host ${victim} between lease end and restore: ${lateFromVictim.length}`,
          `  cut for ${seconds(restoredAt - cutAt)} s; ready again ${seconds(readyAfter)} s after the restore; first delivery from host ${victim} ${claimsAfter} after the restore, ${fromVictimAfter}/${second.length} requests since from host ${victim}; errors logged after the rejoin: ${errorsAfter.length} before its first delivery, ${errorsOnceBack.length} after`,
        ].join('\n'),
      );

      expect(heldAccounts.length).toBeGreaterThan(0);
      expect(figures.dropped).toEqual([]);
      expect(figures.wrongKey).toBe(0);
      expect(lateFromVictim).toEqual([]);
      expect(takenOver).toEqual(heldAccounts);
      expect(reclaimed[0].n).toBeGreaterThan(0);
      expect(fromVictimAfter).toBeGreaterThan(0);
      expect(errorsAfter.length).toBeLessThanOrEqual(3);
      expect(errorsOnceBack).toEqual([]);
      expect(services.map((x) => x.running)).toEqual([true, true, true]);
    },
    600_000,
  );
});
