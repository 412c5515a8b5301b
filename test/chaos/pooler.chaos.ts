import { createTestDatabase, withClient } from '../support/database';
import { ENV_ADMIN_URL, requireEnv } from '../support/env';
import { Receiver, startReceiver } from '../support/receiver';
import { api } from '../support/service';
import { waitUntil } from '../support/poll';
import { CHAOS_KEY, deliveryReport, Fleet, postMany, sessionsOf, webhookAccounts } from './support/herald';
import { PgBouncer, startPgBouncer } from './support/postgres';
import { between, scaled } from './support/scale';

/**
 * Herald behind PgBouncer in transaction mode (Debian's pgbouncer 1.18: no named prepared
 * statements, a server connection per transaction, LISTEN impossible). Two processes use the
 * pooler for the API and delivery (DATABASE_URL, DATABASE_PREPARED_STATEMENTS=false) and reach
 * PostgreSQL directly for the one session that needs it: LISTEN (and the migrations at start),
 * through DATABASE_DIRECT_URL. Three server connections are shared by everything, so any
 * statement that relied on session state (SET, a session advisory lock, a named statement)
 * would meet another client's connection and fail.
 */

const POSTS = scaled(1_000, 150);

describe('behind PgBouncer in transaction mode', () => {
  const fleet = new Fleet();
  let bouncer: PgBouncer | null = null;
  let receiver: Receiver | null = null;
  afterEach(async () => {
    await fleet.stopAll();
    await receiver?.close();
    await bouncer?.stop();
  });

  it('the API and delivery work through the pooler; only the LISTEN connection bypasses it', async () => {
    const { url, name } = await createTestDatabase();
    const adminUrl = requireEnv(ENV_ADMIN_URL);
    bouncer = await startPgBouncer(adminUrl, 3);
    const pooled = bouncer.urlFor(url);
    // The first request of every job fails (503): retries, outcomes and backoff go through the pooler too.
    const seen = new Set<string>();
    receiver = await startReceiver((req) => {
      const key = String(req.headers['idempotency-key']);
      if (seen.has(key)) return { status: 200, delayMs: between(0, 20) };
      seen.add(key);
      return 503;
    });
    const env = {
      DATABASE_DIRECT_URL: url,
      DATABASE_PREPARED_STATEMENTS: 'false',
      DATABASE_POOL_SIZE: '10',
      // Wake-ups come from LISTEN, not from the poll: a lost LISTEN would show as minutes of delay.
      WORKER_POLL_INTERVAL_MS: '60000',
      WORKER_SWEEP_INTERVAL_MS: '60000',
    };
    const a = await fleet.start(pooled, env);
    const b = await fleet.start(pooled, env);
    const accounts = await webhookAccounts(a, [receiver.urlFor('/a'), receiver.urlFor('/b')], 10);
    const startedAt = Date.now();
    const jobIds = [
      ...(await postMany(a, accounts, Math.floor(POSTS / 2), 4)),
      ...(await postMany(b, accounts, POSTS - Math.floor(POSTS / 2), 4)),
    ];
    await waitUntil(
      () => withClient(url, async (db) => (await db.query(`SELECT 1 FROM jobs WHERE status <> 'succeeded' LIMIT 1`)).rows.length === 0),
      120_000,
      `all ${POSTS} jobs delivered through the pooler`,
    );
    const drainedMs = Date.now() - startedAt;

    // Reads through the pooler.
    const job = await api<{ status: string; attempts: unknown[] }>(a, CHAOS_KEY, 'GET', `/v1/jobs/${jobIds[0]}`);
    expect(job.status).toBe(200);
    expect(job.body.status).toBe('succeeded');
    expect(job.body.attempts).toHaveLength(2);
    expect((await api(b, CHAOS_KEY, 'GET', '/v1/posts?limit=5')).status).toBe(200);
    expect((await api(b, CHAOS_KEY, 'GET', '/v1/dlq')).status).toBe(200);

    // An idle worker is woken by NOTIFY: a new post is delivered long before the 60 s poll.
    const before = receiver.requests.length;
    const postedAt = Date.now();
    const [late] = await postMany(b, accounts.slice(0, 1), 1, 1);
    await receiver.waitFor(before + 2, 15_000); // its 503, then the retry
    const wakeMs = Date.now() - postedAt;

    // Each process holds exactly one direct session, the listener; everything else came through PgBouncer.
    for (const s of [a, b]) {
      const direct = await sessionsOf(adminUrl, s.child.pid!);
      expect(direct.map((x) => x.application)).toEqual(['herald-listener']);
    }
    const pooledSessions = await withClient(
      adminUrl,
      async (db) =>
        (
          await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name <> 'herald-listener'`,
            [name],
          )
        ).rows[0].n,
    );
    const report = await deliveryReport(url, receiver.requests);
    console.log(
      [
        `pooler: PgBouncer 1.18 transaction mode, 3 server connections for 2 Herald processes (pool 10 each)`,
        `  ${POSTS} posts through the pooler delivered in ${(drainedMs / 1000).toFixed(1)} s (each failed once, then retried): ${report.requests} requests (a 503, then the retry), dropped ${report.dropped.length}`,
        `  an idle worker woke by NOTIFY on its direct LISTEN connection: ${wakeMs} ms from 201 to delivery (poll interval 60 s)`,
        `  sessions on the database: 1 direct (LISTEN) per process, ${pooledSessions} opened by PgBouncer`,
      ].join('\n'),
    );
    expect(late).toBeDefined();
    expect(wakeMs).toBeLessThan(15_000);
    expect(pooledSessions).toBeLessThanOrEqual(3);
    expect(report.dropped).toEqual([]);
    expect(report.foreign).toBe(0);
    for (const s of [a, b]) expect(s.text()).not.toMatch(/prepared statement|worker round failed/);
  });
});
