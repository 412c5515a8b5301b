import { Client } from 'pg';
import { ensureDatabase } from '../../src/database/data-source';
import { withClient } from '../support/database';
import { ServiceProcess } from '../support/process';
import { Receiver, startReceiver } from '../support/receiver';
import { waitUntil } from '../support/poll';
import { CHAOS_KEY, deliveryReport, Fleet, webhookAccounts } from './support/herald';
import { OwnPostgres, ownPostgres } from './support/postgres';
import { between, scaled, sleep } from './support/scale';
import { keepPosting, PostTry, statusCounts, stopTraffic, watchReadiness } from './support/traffic';

/**
 * The database goes away in the middle of a run, while two Herald processes accept posts and
 * deliver them: PostgreSQL restarted (a server of the test's own: the machine's shared one is
 * never restarted), and separately every Herald session killed with pg_terminate_backend (with
 * new sessions refused for a while, then in bursts). Herald reconnects by itself; /health/ready
 * says 503 during the outage and 200 after; POST /v1/posts answers 201 (committed) or 503, never
 * anything else and never a 2xx for a post that is not in the database; everything accepted is
 * delivered.
 */

const OUTAGE_MS = scaled(15_000, 4_000);
const OUTAGES = scaled(3, 1);

interface Run {
  pg: OwnPostgres;
  url: string;
  services: ServiceProcess[];
  receiver: Receiver;
  posting: ReturnType<typeof keepPosting>[];
  readiness: ReturnType<typeof watchReadiness>[];
}

describe('the database goes away in the middle of a run', () => {
  const fleet = new Fleet();
  let run: Run | null = null;
  afterEach(async () => {
    await stopTraffic();
    await fleet.stopAll();
    await run?.receiver.close();
    await run?.pg.close();
    run = null;
  });

  async function start(): Promise<Run> {
    const pg = await ownPostgres();
    const url = await ensureDatabase(pg.url, 'herald');
    const receiver = await startReceiver(() => ({ status: 200, delayMs: between(5, 40) }));
    const services = [await fleet.start(url), await fleet.start(url)];
    const accounts = await webhookAccounts(services[0], [receiver.urlFor('/hook')], 10);
    run = {
      pg,
      url,
      services,
      receiver,
      posting: services.map((s) => keepPosting(s, CHAOS_KEY, accounts, 20)),
      readiness: services.map((s) => watchReadiness(s)),
    };
    await waitUntil(() => run!.posting.every((p) => p.accepted() >= 20), 30_000, 'posts before the outage');
    return run;
  }

  /** Waits for every client to see the outage (503s) and the readiness probe to say so. */
  async function outageSeen(r: Run, from: number[]): Promise<void> {
    await waitUntil(
      () =>
        r.posting.every((p, i) => p.tries.slice(from[i]).some((t) => t.status === 503)) && r.readiness.every((w) => w.seen.includes(503)),
      30_000,
      'the outage to show in the answers',
    );
  }

  async function recovered(r: Run): Promise<void> {
    const from = r.posting.map((p) => p.tries.length);
    try {
      await waitUntil(
        () => r.posting.every((p, i) => p.tries.slice(from[i]).filter((t) => t.status === 201).length >= 10),
        60_000,
        'posts accepted again after the outage',
      );
    } catch (err) {
      // Say what each process answered and logged, not only that it did not recover.
      const state = r.services.map(
        (s, i) =>
          `process ${i + 1} (${s.running ? 'running' : 'exited'}): last answers ${r.posting[i].tries
            .slice(-5)
            .map((t) => t.status)
            .join(' ')}; readiness ${r.readiness[i].seen.join(' → ')}; log tail:\n${s.text().slice(-1500)}`,
      );
      throw new Error(`${(err as Error).message}\n${state.join('\n')}`, { cause: err });
    }
  }

  async function finish(r: Run, label: string): Promise<void> {
    await Promise.all(r.posting.map((p) => p.stop()));
    await Promise.all(r.readiness.map((w) => w.stop()));
    const tries: PostTry[] = r.posting.flatMap((p) => p.tries);
    const accepted = tries.flatMap((t) => t.jobIds);
    await waitUntil(
      () => withClient(r.url, async (db) => (await db.query(`SELECT 1 FROM jobs WHERE status <> 'succeeded' LIMIT 1`)).rows.length === 0),
      90_000,
      'every job in the database delivered',
    );
    const stored = await withClient(
      r.url,
      async (db) => new Set((await db.query<{ id: string }>(`SELECT id FROM jobs`)).rows.map((x) => x.id)),
    );
    const uncommitted201 = accepted.filter((id) => !stored.has(id));
    const report = await deliveryReport(r.url, r.receiver.requests);
    const slowest = Math.max(...tries.map((t) => t.ms));
    console.log(
      [
        `${label}: ${OUTAGES} outage(s) of ~${OUTAGE_MS / 1000} s, 2 Herald processes`,
        `  POST /v1/posts: ${[...statusCounts(tries)].map(([s, n]) => `${n} × ${s}`).join(', ')}; slowest answer ${slowest} ms; 2xx for a post not in the database: ${uncommitted201.length}`,
        `  committed without a 201 (the client saw 503 or no answer; a retry with Idempotency-Key finds it): ${stored.size - accepted.length}`,
        `  /health/ready: ${r.readiness.map((w) => w.seen.join(' → ')).join(' | ')}`,
        `  ${report.jobs} jobs, ${report.requests} requests, dropped ${report.dropped.length}, duplicates ${report.duplicates} (same key), foreign ${report.foreign}`,
      ].join('\n'),
    );
    expect(r.services.every((s) => s.running)).toBe(true);
    expect([...statusCounts(tries).keys()].sort()).toEqual(['201', '503']);
    expect(slowest).toBeLessThan(10_000);
    expect(uncommitted201).toEqual([]);
    expect(report.dropped).toEqual([]);
    expect(report.foreign).toBe(0);
    for (const w of r.readiness) {
      expect(w.seen[0]).toBe(200);
      expect(w.seen.filter((s) => s === 503).length).toBeGreaterThanOrEqual(OUTAGES);
      expect(w.seen[w.seen.length - 1]).toBe(200);
    }
    // The LISTEN connections are back: one per process.
    await waitUntil(
      () =>
        withClient(r.pg.url, async (db) => {
          const { rows } = await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = 'herald' AND application_name = 'herald-listener' AND query LIKE 'LISTEN%'`,
          );
          return rows.length === r.services.length;
        }).catch(() => false),
      30_000,
      'both LISTEN connections to be back',
    );
  }

  it('PostgreSQL restarted mid-run', async () => {
    const r = await start();
    for (let i = 0; i < OUTAGES; i++) {
      const from = r.posting.map((p) => p.tries.length);
      await r.pg.stop();
      await outageSeen(r, from);
      await sleep(Math.max(0, OUTAGE_MS - 2_000));
      await r.pg.start();
      await recovered(r);
      await sleep(between(500, 2_000));
    }
    await finish(r, 'PostgreSQL restarted');
  });

  it("Herald's sessions killed with pg_terminate_backend mid-run", async () => {
    const r = await start();
    const admin = async (sql: string) => {
      const c = new Client({ connectionString: r.pg.url });
      await c.connect();
      try {
        return (await c.query(sql)).rows;
      } finally {
        await c.end();
      }
    };
    const terminate = () =>
      admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'herald' AND pid <> pg_backend_pid()`);
    for (let i = 0; i < OUTAGES; i++) {
      const from = r.posting.map((p) => p.tries.length);
      // An outage: new sessions refused, the open ones killed.
      await admin(`ALTER DATABASE herald ALLOW_CONNECTIONS false`);
      expect((await terminate()).length).toBeGreaterThan(0);
      try {
        await outageSeen(r, from);
        await sleep(Math.max(0, OUTAGE_MS - 2_000));
      } finally {
        await admin(`ALTER DATABASE herald ALLOW_CONNECTIONS true`);
      }
      await recovered(r);
      // Then bursts: every session killed again and again while work flows.
      for (let b = 0; b < 5; b++) {
        await terminate();
        await sleep(between(100, 600));
      }
      await recovered(r);
    }
    await finish(r, 'pg_terminate_backend');
  });
});
