import autocannon from 'autocannon';
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { makeWorkerUtils, runMigrations as runGraphileMigrations } from 'graphile-worker';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { CLAIM_CANDIDATES_SQL } from '../src/queue/sql/claim-candidates';

/**
 * `npm run bench`: Herald's delivery engine measured end to end, beside graphile-worker doing
 * the same HTTP work on the same PostgreSQL in the same run. Prints figures; asserts nothing.
 *
 *   BENCH_JOBS (20000) BENCH_REPS (3) BENCH_ACCOUNTS (20) BENCH_TRICKLE_SECONDS (10)
 *   BENCH_SKIP (comma list: ceiling,herald,graphile,trickle,posts,claim)
 */
const ROOT = path.resolve(__dirname, '../..');
const JOBS = Number(process.env.BENCH_JOBS ?? 20_000);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 20);
const TRICKLE_SECONDS = Number(process.env.BENCH_TRICKLE_SECONDS ?? 10);
const SKIP = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));
const KEY = 'bench-bootstrap-key-000000000000';
const SECRET = 'cd'.repeat(32);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** A child process that prints `marker` on stdout when ready. */
function startChild(
  args: string[],
  env: Record<string, string>,
  marker: RegExp,
): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = out.match(marker);
      if (m) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve({ child, match: m });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d: Buffer) => {
      if (process.env.BENCH_STDERR) process.stderr.write(d);
      out += d.toString();
      const m = out.match(marker);
      if (m) resolve({ child, match: m });
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}:\n${out.slice(-2000)}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
  });
}

class Db {
  constructor(readonly serverUrl: string) {}

  url(name: string): string {
    const u = new URL(this.serverUrl);
    u.pathname = `/${name}`;
    return u.toString();
  }

  async create(): Promise<{ name: string; url: string }> {
    const name = `herald_bench_${randomBytes(4).toString('hex')}`;
    await this.admin((c) => c.query(`CREATE DATABASE ${name}`));
    return { name, url: this.url(name) };
  }

  async drop(name: string): Promise<void> {
    await this.admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }

  async admin<T>(work: (c: Client) => Promise<T>): Promise<T> {
    return this.with(this.serverUrl, work);
  }

  async with<T>(url: string, work: (c: Client) => Promise<T>): Promise<T> {
    const c = new Client({ connectionString: url });
    await c.connect();
    try {
      return await work(c);
    } finally {
      await c.end();
    }
  }
}

interface Receiver {
  url: string;
  child: ChildProcess;
  reset(arrivals?: boolean): Promise<void>;
  stats(): Promise<{ count: number; first: number; last: number; arrivals: Record<string, number> }>;
}

async function startReceiver(): Promise<Receiver> {
  const { child, match } = await startChild([path.join(ROOT, 'dist/bench/receiver.js')], {}, /PORT (\d+)/);
  const url = `http://127.0.0.1:${match[1]}`;
  return {
    url,
    child,
    reset: async (arrivals = false) => {
      await fetch(`${url}/__reset${arrivals ? '?arrivals=1' : ''}`, { method: 'POST' });
    },
    stats: async () => (await (await fetch(`${url}/__stats`)).json()) as Awaited<ReturnType<Receiver['stats']>>,
  };
}

async function startHerald(databaseUrl: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const profile =
    process.env.BENCH_PROFILE && env.WORKER_ENABLED === 'true' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const { child } = await startChild(
    [...profile, path.join(ROOT, 'dist/src/main.js')],
    {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HERALD_API_KEY: KEY,
      HERALD_SECRET_KEY: SECRET,
      HERALD_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'warn',
      ...(process.env.BENCH_STDERR ? {} : {}),
      ...env,
    },
    /Herald is listening/,
  );
  return { child, url: `http://127.0.0.1:${port}` };
}

async function call<T>(base: string, method: string, p: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function createAccounts(api: string, receiverUrl: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(
      (
        await call<{ id: string }>(api, 'POST', '/v1/accounts', {
          provider: 'webhook',
          name: `bench ${i}`,
          config: { url: `${receiverUrl}/hook` },
        })
      ).id,
    );
  }
  return ids;
}

/** `jobs` jobs as posts of `accounts.length` targets each, through the API, 16 at a time. */
async function createPosts(api: string, accounts: string[], jobs: number, extra: Record<string, unknown> = {}): Promise<void> {
  const posts = Math.ceil(jobs / accounts.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < posts) {
        next += 1;
        await call(api, 'POST', '/v1/posts', {
          text: `bench post ${next}`,
          targets: accounts.map((accountId) => ({ accountId })),
          ...extra,
        });
      }
    }),
  );
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string, everyMs = 25): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return Date.now();
    await sleep(everyMs);
  }
  throw new Error(`bench: timed out waiting for ${what}`);
}

// ---------------------------------------------------------------------------------------

async function receiverCeiling(receiver: Receiver): Promise<number> {
  const result = await autocannon({
    url: `${receiver.url}/hook`,
    method: 'POST',
    body: JSON.stringify({ id: 'x', type: 'post.publish', data: { text: 'ceiling' } }),
    headers: { 'content-type': 'application/json' },
    connections: 100,
    duration: 5,
  });
  return result.requests.average;
}

/** Herald, end to end: N due jobs, `workers` worker processes; deliveries/s until all outcomes are durable. */
async function heraldThroughput(db: Db, receiver: Receiver, workers: number): Promise<{ rate: number; cpu: string }> {
  const { name, url } = await db.create();
  try {
    const api = await startHerald(url, { WORKER_ENABLED: 'false' });
    const accounts = await createAccounts(api.url, receiver.url, ACCOUNTS);
    await createPosts(api.url, accounts, JOBS);
    await stopChild(api.child);
    await receiver.reset();
    const cpuBefore = await pgCpu(db, name);
    const procs = await Promise.all(Array.from({ length: workers }, () => startHerald(url, { WORKER_ENABLED: 'true' })));
    // CPU spent booting (Nest, TypeORM, migrations check) is not delivery work.
    const bootCpu = procs.map((p) => childCpu(p.child));
    const pgCpuBefore = postgresCpu();
    // Cheap polling (the receiver's count) until every job arrived, then the database until
    // every outcome is durable: polling must not steal the CPU it measures.
    await waitFor(async () => (await receiver.stats()).count >= JOBS, 300_000, 'Herald deliveries', 50);
    const done = await waitFor(
      async () =>
        db.with(
          url,
          async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded'`)).rows[0].n >= JOBS,
        ),
      300_000,
      'Herald outcomes',
      10,
    );
    const stats = await receiver.stats();
    const attempts = await db.with(url, async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM attempts`)).rows[0].n);
    const cpuAfter = await pgCpu(db, name);
    const pgCpuUs = postgresCpu() - pgCpuBefore;
    const usage = procs.map((p) => childCpu(p.child)).map((u, i) => u - bootCpu[i]);
    await Promise.all(procs.map((p) => stopChild(p.child)));
    const seconds = (done - stats.first) / 1000;
    const workerCpuUs = usage.reduce((a, b) => a + b, 0);
    return {
      rate: JOBS / seconds,
      cpu: `${attempts} attempt rows; receiver saw ${stats.count}; worker CPU ${fmt(workerCpuUs / JOBS)} µs/delivery; PostgreSQL CPU ${fmt(pgCpuUs / JOBS)} µs/delivery; xact commits ${fmt((cpuAfter - cpuBefore) / JOBS, 2)}/delivery`,
    };
  } finally {
    await db.drop(name);
  }
}

/** Commits on this database so far (pg_stat_database.xact_commit). */
async function pgCpu(db: Db, name: string): Promise<number> {
  return db.admin(async (c) =>
    Number(
      (await c.query<{ xact_commit: string }>(`SELECT xact_commit FROM pg_stat_database WHERE datname = $1`, [name])).rows[0]
        ?.xact_commit ?? 0,
    ),
  );
}

/**
 * CPU time (µs) of every `postgres` process on this machine so far (Linux /proc), including
 * the children the postmaster already reaped (cutime/cstime): backends of closed connections
 * would otherwise take their CPU time with them.
 */
function postgresCpu(): number {
  let total = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const raw = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!raw.includes('(postgres)')) continue;
      const stat = raw.split(') ')[1].split(' ');
      total += ((Number(stat[11]) + Number(stat[12]) + Number(stat[13]) + Number(stat[14])) / 100) * 1e6;
    } catch {
      /* gone */
    }
  }
  return total;
}

/** User+system CPU time of a child process so far, in µs (Linux /proc). */
function childCpu(child: ChildProcess): number {
  try {
    const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const ticks = Number(stat[11]) + Number(stat[12]);
    return (ticks / 100) * 1e6;
  } catch {
    return 0;
  }
}

async function graphileThroughput(db: Db, receiver: Receiver, mode: 'default' | 'batched'): Promise<number> {
  const { name, url } = await db.create();
  try {
    await runGraphileMigrations({ connectionString: url });
    const utils = await makeWorkerUtils({ connectionString: url });
    const specs = Array.from({ length: JOBS }, (_, i) => ({
      identifier: 'deliver',
      payload: { url: `${receiver.url}/hook`, key: `gw-${i}`, text: `bench post ${i}` },
    }));
    for (let i = 0; i < specs.length; i += 5000) await utils.addJobs(specs.slice(i, i + 5000));
    await utils.release();
    await receiver.reset();
    const { child } = await startChild([path.join(ROOT, 'dist/bench/graphile-runner.js'), url, mode, '100'], {}, /READY/);
    await waitFor(async () => (await receiver.stats()).count >= JOBS, 300_000, `graphile-worker (${mode})`, 50);
    const done = await waitFor(
      async () =>
        db.with(url, async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM graphile_worker.jobs`)).rows[0].n === 0),
      300_000,
      `graphile-worker (${mode}) completions`,
      10,
    );
    const stats = await receiver.stats();
    await stopChild(child);
    return JOBS / ((done - stats.first) / 1000);
  } finally {
    await db.drop(name);
  }
}

/** Due→delivered latency at a steady 50 jobs/s: each job due 100 ms after it is created. */
/**
 * 50 jobs/s for TRICKLE_SECONDS, each due 100 ms after `enqueue` is called with it; returns
 * each job's due→received latency in ms (the receiver records arrivals by idempotency key).
 */
async function trickle(receiver: Receiver, enqueue: (i: number, dueAt: Date) => Promise<string>): Promise<number[]> {
  await receiver.reset(true);
  const due = new Map<string, number>();
  const total = 50 * TRICKLE_SECONDS;
  const start = Date.now();
  for (let i = 0; i < total; i++) {
    await sleep(Math.max(0, start + i * 20 - Date.now()));
    const dueAt = new Date(Date.now() + 100);
    due.set(await enqueue(i, dueAt), dueAt.getTime());
  }
  await waitFor(async () => (await receiver.stats()).count >= total, 30_000, 'trickle deliveries');
  const { arrivals } = await receiver.stats();
  return [...due].map(([key, at]) => arrivals[key] - at);
}

async function heraldTrickle(db: Db, receiver: Receiver): Promise<number[]> {
  const { name, url } = await db.create();
  try {
    const herald = await startHerald(url, { WORKER_ENABLED: 'true' });
    const [account] = await createAccounts(herald.url, receiver.url, 1);
    const latencies = await trickle(receiver, async (i, dueAt) => {
      const post = await call<{ jobs: { idempotencyKey: string }[] }>(herald.url, 'POST', '/v1/posts', {
        text: `trickle ${i}`,
        targets: [{ accountId: account }],
        scheduledAt: dueAt.toISOString(),
      });
      return post.jobs[0].idempotencyKey;
    });
    await stopChild(herald.child);
    return latencies;
  } finally {
    await db.drop(name);
  }
}

async function graphileTrickle(db: Db, receiver: Receiver): Promise<number[]> {
  const { name, url } = await db.create();
  try {
    await runGraphileMigrations({ connectionString: url });
    const utils = await makeWorkerUtils({ connectionString: url });
    const { child } = await startChild([path.join(ROOT, 'dist/bench/graphile-runner.js'), url, 'default', '100'], {}, /READY/);
    const latencies = await trickle(receiver, async (i, runAt) => {
      const key = `gwt-${i}`;
      await utils.addJob('deliver', { url: `${receiver.url}/hook`, key, text: `trickle ${i}` }, { runAt });
      return key;
    });
    await utils.release();
    await stopChild(child);
    return latencies;
  } finally {
    await db.drop(name);
  }
}

/** POST /v1/posts accepted per second (commit, then 201), one target each, 10 s. */
async function postsThroughput(
  db: Db,
  receiver: Receiver,
): Promise<{ rate: number; p50: number; p99: number; non2xx: number; rows: number }> {
  const { name, url } = await db.create();
  try {
    const api = await startHerald(url, { WORKER_ENABLED: 'false' });
    const [account] = await createAccounts(api.url, receiver.url, 1);
    const result = await autocannon({
      url: `${api.url}/v1/posts`,
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Launch day!', targets: [{ accountId: account }] }),
      connections: 50,
      duration: 10,
    });
    await stopChild(api.child);
    const rows = await db.with(url, async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM posts`)).rows[0].n);
    return { rate: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, rows };
  } finally {
    await db.drop(name);
  }
}

/** The claim as finished work piles up: median claim+release of 100 due jobs, with 0 and 1M old rows. */
async function claimScaling(db: Db): Promise<{ empty: number; loaded: number; plan: string }> {
  const { name, url } = await db.create();
  try {
    const api = await startHerald(url, { WORKER_ENABLED: 'false' });
    const accounts = await createAccounts(api.url, 'http://127.0.0.1:9', 20);
    await createPosts(api.url, accounts, 2000);
    await stopChild(api.child);
    const claimOnce = (c: Client) => measureClaim(c);
    const empty = await db.with(url, claimOnce);
    await db.with(url, async (c) => {
      // 1,000,000 finished jobs (90 % succeeded, 10 % dead) of the same 20 accounts, under
      // 50,000 old posts: what a year of publishing leaves behind.
      await c.query(`
        INSERT INTO posts (id, workspace_id, text, scheduled_at, created_at)
        SELECT gen_random_uuid(), (SELECT workspace_id FROM accounts LIMIT 1), 'old', now() - interval '30 days', now() - interval '30 days'
        FROM generate_series(1, 50000)`);
      await c.query(`
        INSERT INTO jobs (workspace_id, post_id, account_id, provider, status, run_at, idempotency_key, payload,
                          dead_reason, attempt_count, finished_at)
        SELECT a.workspace_id, p.id, a.id, 'webhook',
               CASE WHEN (p.n + a.n) % 10 = 0 THEN 'dead' ELSE 'succeeded' END,
               now() - interval '30 days', p.id || '-' || a.id, '{"text":"old"}',
               CASE WHEN (p.n + a.n) % 10 = 0 THEN 'permanent' END, 1, now() - interval '30 days'
        FROM (SELECT id, row_number() OVER () AS n FROM posts WHERE text = 'old') p
        CROSS JOIN (SELECT id, workspace_id, row_number() OVER () AS n FROM accounts) a`);
      await c.query(`VACUUM ANALYZE jobs`);
    });
    const loaded = await db.with(url, claimOnce);
    const plan = await db.with(url, async (c) =>
      (
        await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${CANDIDATES_SQL}`, [
          CANDIDATES_LIMIT,
          'bench',
          2,
        ])
      ).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n'),
    );
    const old = await db.with(
      url,
      async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE status <> 'scheduled'`)).rows[0].n,
    );
    return { empty, loaded, plan: `${fmt(old)} finished jobs in the table\n${plan}` };
  } finally {
    await db.drop(name);
  }
}

/** The claim's candidate scan, exactly as the worker runs it, for 100 jobs. */
const CANDIDATES_SQL = CLAIM_CANDIDATES_SQL;
const CANDIDATES_LIMIT = 100;

/** Median ms of BEGIN; candidate scan (100 of 2,000 due); ROLLBACK — over 200 runs. */
async function measureClaim(c: Client): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = process.hrtime.bigint();
    await c.query('BEGIN');
    await c.query(CANDIDATES_SQL, [CANDIDATES_LIMIT, 'bench', 2]);
    await c.query('ROLLBACK');
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return median(times);
}

async function main(): Promise<void> {
  const lines: string[] = [];
  const say = (s: string) => {
    console.log(s);
    lines.push(s);
  };
  let stopEmbedded: (() => Promise<void>) | null = null;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-pg-'));
    fs.chmodSync(dir, 0o755);
    const pg = await startEmbeddedPostgres({
      dataDir: path.join(dir, 'data'),
      port: await freePort(),
      persistent: false,
      log: () => undefined,
    });
    serverUrl = pg.url;
    stopEmbedded = async () => {
      await pg.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    };
  }
  const db = new Db(serverUrl);
  const version = await db.admin(async (c) => (await c.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version);
  say(`Herald benchmark — ${new Date().toISOString()}`);
  say(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${fmt(os.totalmem() / 2 ** 30)} GiB; Node ${process.version}; PostgreSQL ${version} (${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'})`,
  );
  say(
    `work: ${fmt(JOBS)} webhook jobs due at once over ${ACCOUNTS} accounts (≤ 5 in flight each), receiver in its own process; medians of ${REPS} runs`,
  );
  say(
    'noise: this is a shared 2-core VM; the receiver, PostgreSQL and the workers share those cores; compare ratios within one run, not absolute figures across runs.',
  );
  const receiver = await startReceiver();
  try {
    let ceiling = 0;
    if (!SKIP.has('ceiling')) {
      ceiling = await receiverCeiling(receiver);
      say(`receiver ceiling (autocannon, 100 connections): ${fmt(ceiling)} req/s`);
    }
    const results: Record<string, number> = {};
    if (!SKIP.has('herald')) {
      for (const workers of [1, 2]) {
        const runs: number[] = [];
        for (let r = 0; r < REPS; r++) {
          const { rate, cpu } = await heraldThroughput(db, receiver, workers);
          runs.push(rate);
          say(`  herald ${workers} worker process(es), run ${r + 1}: ${fmt(rate)} deliveries/s (${cpu})`);
        }
        results[`herald${workers}`] = median(runs);
        say(`herald, ${workers} worker process(es): median ${fmt(median(runs))} deliveries/s [${runs.map((x) => fmt(x)).join(', ')}]`);
      }
    }
    if (!SKIP.has('graphile')) {
      for (const mode of ['default', 'batched'] as const) {
        const runs: number[] = [];
        for (let r = 0; r < REPS; r++) runs.push(await graphileThroughput(db, receiver, mode));
        results[`graphile-${mode}`] = median(runs);
        say(`graphile-worker 0.17.3 ${mode} (concurrency 100): median ${fmt(median(runs))} jobs/s [${runs.map((x) => fmt(x)).join(', ')}]`);
      }
    }
    if (results.herald1 && results['graphile-batched']) {
      say(`ratio herald(1 process) / graphile-worker batched: ${fmt(results.herald1 / results['graphile-batched'], 2)}×`);
      say(`ratio herald(2 processes) / graphile-worker batched: ${fmt(results.herald2 / results['graphile-batched'], 2)}×`);
      say(`ratio herald(1 process) / graphile-worker defaults: ${fmt(results.herald1 / results['graphile-default'], 2)}×`);
      if (ceiling) say(`herald(1 process) / receiver ceiling: ${fmt((results.herald1 / ceiling) * 100, 1)} %`);
    }
    if (!SKIP.has('trickle')) {
      const h = await heraldTrickle(db, receiver);
      say(
        `trickle 50 jobs/s × ${TRICKLE_SECONDS} s, due→received: herald p50 ${fmt(percentile(h, 50), 1)} ms, p99 ${fmt(percentile(h, 99), 1)} ms, max ${fmt(Math.max(...h), 1)} ms`,
      );
      const g = await graphileTrickle(db, receiver);
      say(
        `trickle 50 jobs/s × ${TRICKLE_SECONDS} s, due→received: graphile-worker p50 ${fmt(percentile(g, 50), 1)} ms, p99 ${fmt(percentile(g, 99), 1)} ms, max ${fmt(Math.max(...g), 1)} ms`,
      );
    }
    if (!SKIP.has('posts')) {
      const p = await postsThroughput(db, receiver);
      say(
        `POST /v1/posts (autocannon, 50 connections, 10 s, 1 target): ${fmt(p.rate)} posts/s, p50 ${p.p50} ms, p99 ${p.p99} ms, non-2xx ${p.non2xx}, ${fmt(p.rows)} posts committed`,
      );
    }
    if (!SKIP.has('claim')) {
      const c = await claimScaling(db);
      say(
        `claim candidate scan (2,000 due): median ${fmt(c.empty, 2)} ms with no finished jobs, ${fmt(c.loaded, 2)} ms with ${c.plan.split('\n')[0]}`,
      );
      say(
        c.plan
          .split('\n')
          .slice(1)
          .map((l) => `    ${l}`)
          .join('\n'),
      );
    }
  } finally {
    await stopChild(receiver.child);
    if (stopEmbedded) await stopEmbedded();
  }
  fs.mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'bench/results/latest.txt'), lines.join('\n') + '\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
