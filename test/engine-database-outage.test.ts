import { Client } from 'pg';
import { ensureDatabase } from '../src/database/data-source';
import { ownPostgres } from './chaos/support/postgres';
import { keepPosting, PostTry, watchReadiness } from './chaos/support/traffic';
import { createTestDatabase, withClient } from './support/database';
import { ENV_ADMIN_URL, requireEnv } from './support/env';
import { ServiceProcess } from './support/process';
import { Receiver } from './support/receiver';
import { SERVICE_KEY, useServices } from './support/service';
import { waitUntil } from './support/poll';

/**
 * A database that goes away must not take Herald with it (issue "one owner": "A database restart
 * kills Herald"). The real service (`node dist/src/main.js`) runs against a PostgreSQL that is
 * restarted, and separately against one that terminates Herald's backends. Throughout, a client
 * keeps posting and another keeps probing readiness. What must hold:
 * - the process stays up;
 * - /health/ready answers 503 while the database is away and 200 again after;
 * - POST /v1/posts answers 503 during the outage (never a 2xx for a post that was not committed,
 *   never a hang, never another error);
 * - every post accepted before, during and after is delivered;
 * - the LISTEN connection is back (the worker is woken by NOTIFY again, not only by polling).
 *
 * The restart uses an embedded PostgreSQL owned by this test (the machine's shared server cannot
 * be restarted by a test): stopping it is PostgreSQL's fast shutdown (`pg_ctl stop -m fast`:
 * SIGINT, sessions ended with 57P01), starting it again reuses its data folder.
 */

/** What must be true once the database is back, whatever the outage was. */
async function expectEverythingAcceptedDelivered(
  service: ServiceProcess,
  receiver: Receiver,
  tries: PostTry[],
  readiness: number[],
  databaseUrl: string,
  label: string,
): Promise<void> {
  expect(service.running).toBe(true);
  const statuses = new Map<string, number>();
  for (const t of tries) statuses.set(String(t.status), (statuses.get(String(t.status)) ?? 0) + 1);
  const slowest = Math.max(...tries.map((t) => t.ms));
  console.log(
    `${label}: ${tries.length} POST /v1/posts: ${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}; slowest answer ${slowest} ms; readiness ${readiness.join(' → ')}`,
  );
  // Only two answers exist: accepted (committed), or 503. No 500, and no hang: the client gives
  // up after 15 s (keepPosting), which would be a "no answer" here.
  expect([...statuses.keys()].sort()).toEqual(['201', '503']);
  expect(readiness[0]).toBe(200);
  expect(readiness).toContain(503);
  expect(readiness[readiness.length - 1]).toBe(200);

  const accepted = tries.flatMap((t) => t.jobIds);
  await waitUntil(
    () => {
      const keys = new Set(receiver.requests.map((r) => String(r.headers['idempotency-key'])));
      return accepted.every((id) => keys.has(id));
    },
    30_000,
    `every accepted post (${accepted.length} jobs) to reach the receiver`,
  );
  // Every 201 is a committed post, and every job in the database ends published.
  await waitUntil(
    () =>
      withClient(databaseUrl, async (db) => {
        const { rows } = await db.query<{ id: string; status: string }>(`SELECT id, status FROM jobs`);
        const stored = new Set(rows.map((r) => r.id));
        return accepted.every((id) => stored.has(id)) && rows.every((r) => r.status === 'succeeded');
      }),
    15_000,
    'every job in the database to be published',
  );
}

/** The listener's session is back on the database, listening. */
async function listenerBack(adminUrl: string, database: string): Promise<void> {
  await waitUntil(
    async () => {
      const client = new Client({ connectionString: adminUrl });
      try {
        await client.connect();
        const { rows } = await client.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = 'herald-listener' AND query LIKE 'LISTEN%'`,
          [database],
        );
        return rows.length === 1;
      } catch {
        return false;
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    20_000,
    'the LISTEN connection to be back',
  );
}

describe('the database goes away and comes back', () => {
  const fleet = useServices();

  async function start(databaseUrl: string): Promise<{ service: ServiceProcess; receiver: Receiver; accountId: string }> {
    const receiver = await fleet.receiver(() => ({ status: 200, body: { id: 'ok' } }));
    // The poll interval at its default (1 s): after an outage, wake-ups come back by LISTEN.
    const service = await fleet.start(databaseUrl, { WORKER_POLL_INTERVAL_MS: '1000' });
    const [accountId] = await fleet.accounts(service, receiver.urlFor('/hook'), 1);
    return { service, receiver, accountId };
  }

  it('PostgreSQL restarted mid-run: Herald stays up, answers 503 meanwhile, and delivers every accepted post', async () => {
    const pg = await ownPostgres();
    try {
      const url = await ensureDatabase(pg.url, 'herald');
      const { service, receiver, accountId } = await start(url);
      const posting = keepPosting(service, SERVICE_KEY, [accountId], 100);
      const readiness = watchReadiness(service);
      await waitUntil(() => posting.tries.filter((t) => t.status === 201).length >= 10, 20_000, 'posts before the restart');

      await pg.stop();
      await waitUntil(
        () => posting.tries.filter((t) => t.status === 503).length >= 5 && readiness.seen.includes(503),
        20_000,
        'the outage to show',
      );
      await pg.start();
      const back = posting.tries.length;
      await waitUntil(() => posting.tries.slice(back).filter((t) => t.status === 201).length >= 10, 30_000, 'posts after the restart');
      await posting.stop();
      await readiness.stop();

      await expectEverythingAcceptedDelivered(service, receiver, posting.tries, readiness.seen, url, 'restart');
      await listenerBack(pg.url, 'herald');
    } finally {
      await pg.close();
    }
  }, 180_000);

  it("Herald's backends terminated mid-run (pg_terminate_backend, new sessions refused): the same", async () => {
    const { url, name } = await createTestDatabase();
    const adminUrl = requireEnv(ENV_ADMIN_URL);
    const { service, receiver, accountId } = await start(url);
    const posting = keepPosting(service, SERVICE_KEY, [accountId], 100);
    const readiness = watchReadiness(service);
    await waitUntil(() => posting.tries.filter((t) => t.status === 201).length >= 10, 20_000, 'posts before the outage');

    // Refusing new sessions to this database only, then ending Herald's: an outage of this
    // database alone (the other test files share the server), for as long as the test wants.
    await withClient(adminUrl, async (db) => {
      await db.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      const { rows } = await db.query(
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [name],
      );
      expect(rows.length).toBeGreaterThan(0);
    });
    try {
      await waitUntil(
        () => posting.tries.filter((t) => t.status === 503).length >= 5 && readiness.seen.includes(503),
        20_000,
        'the outage to show',
      );
    } finally {
      await withClient(adminUrl, (db) => db.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`));
    }
    const back = posting.tries.length;
    await waitUntil(() => posting.tries.slice(back).filter((t) => t.status === 201).length >= 10, 30_000, 'posts after the outage');
    // And a burst of terminations without refusing sessions: every connection dies at once, again and again.
    for (let i = 0; i < 3; i++) {
      await withClient(adminUrl, (db) =>
        db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]),
      );
      await new Promise((r) => setTimeout(r, 300));
    }
    const afterBurst = posting.tries.length;
    await waitUntil(() => posting.tries.slice(afterBurst).filter((t) => t.status === 201).length >= 5, 30_000, 'posts after the burst');
    await posting.stop();
    await readiness.stop();

    await expectEverythingAcceptedDelivered(service, receiver, posting.tries, readiness.seen, url, 'terminate');
    await listenerBack(adminUrl, name);
  }, 180_000);
});
