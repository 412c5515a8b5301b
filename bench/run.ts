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
import { HISTORY_TABLE_SQL } from './history-table';
import { hostileInputFigures } from './hostile-input';
import { totals, WriteTotals, Writes, writesBetween, writeSnapshot } from './writes';
import { BENCH_SLOW_START, roundStatements, StatementCosts } from './round-statements';
import { compareHttpClients } from './http-clients';
import { EventsBurst, eventsLines } from './events';
import { Better, compareFigures, Figure } from './baseline';
import { idleFigures, idleLines } from './idle';

/**
 * `npm run bench`: Herald's delivery engine and API measured end to end, beside graphile-worker
 * doing the same HTTP work and a bare intake server, on the same PostgreSQL in the same run.
 * Prints every figure with its ratio and writes them to bench/results/latest.txt; asserts nothing.
 *
 *   BENCH_RUNS (5): runs per throughput figure (medians, spread printed)
 *   BENCH_SCALE (1): scales jobs and table sizes; e.g. 0.1 with BENCH_RUNS=1 for a quick look
 *   BENCH_SKIP (comma list: ceiling,throughput,writes,statements,curve,accounts,trickle,intake,clients,data,parsers,events,idle)
 *   BENCH_ONLY (comma list of the same names): run only these sections
 *   BENCH_PROFILE=<dir>: worker processes write a CPU profile there (node --cpu-prof); API-only
 *   processes too with BENCH_PROFILE_API=1
 *   BENCH_NODE_ARGS: more node flags for every Herald process (e.g. --heap-prof, --trace-gc)
 *     (after the flags of `npm start`, which every Herald process gets; a later flag wins)
 *   BENCH_BASELINE (bench/results/baseline.json): figures of an earlier run to compare with (no
 *   regression beyond BENCH_NOISE, 0.25); each run writes its own to bench/results/latest.json
 *   BENCH_JOBS_FILLFACTOR=<n>: the writes section repacks Herald's job_state table with this fillfactor
 *   first (an experiment docs/benchmarks.md reports; Herald's schema has none)
 */
const ROOT = path.resolve(__dirname, '../..');
/**
 * The Node flags `npm start` gives Herald (package.json's start script, `--node-flag=` of
 * scripts/node24.js), so every Herald process here runs as a started service does.
 */
const START_FLAGS = [
  ...(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.matchAll(
    /--node-flag=(\S+)/g,
  ),
].map((m) => m[1]);
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5));
const JOBS = Math.round(20_000 * SCALE);
const ACCOUNTS = 20;
const CURVE_ACCOUNTS = 200;
const IDLE_ACCOUNTS = 9_980;
const TRICKLE_SECONDS = Math.max(5, Math.round(20 * SCALE));
const INTAKE_SECONDS = 5;
const INTAKE_CONNECTIONS = 50;
const SKIP = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));
const ONLY = new Set((process.env.BENCH_ONLY ?? '').split(',').filter(Boolean));
/** Whether a section runs: not in BENCH_SKIP, and in BENCH_ONLY when that is set. */
const section = (name: string): boolean => !SKIP.has(name) && (ONLY.size === 0 || ONLY.has(name));
/** Runs per system of the writes section: its counts hardly vary from run to run. */
const WRITES_RUNS = Math.min(RUNS, 3);
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
const spread = (xs: number[], digits = 0) =>
  `median ${fmt(median(xs), digits)} [${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}, n=${xs.length}]`;
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
    process.env.BENCH_PROFILE && (env.WORKER_ENABLED === 'true' || process.env.BENCH_PROFILE_API)
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
      : [];
  const { child } = await startChild(
    [...START_FLAGS, ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...profile, path.join(ROOT, 'dist/src/main.js')],
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

/** `jobs` jobs as posts of 20 targets each (a post's most), the accounts in turn, through the API, 16 at a time. */
async function createPosts(api: string, accounts: string[], jobs: number): Promise<void> {
  const groups: string[][] = [];
  for (let i = 0; i < accounts.length; i += 20) groups.push(accounts.slice(i, i + 20));
  let next = 0;
  let left = jobs;
  const posts: string[][] = [];
  while (left > 0) {
    const group = groups[posts.length % groups.length].slice(0, left);
    posts.push(group);
    left -= group.length;
  }
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < posts.length) {
        const targets = posts[next];
        next += 1;
        await call(api, 'POST', '/v1/posts', { text: `bench post ${next}`, targets: targets.map((accountId) => ({ accountId })) });
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

/** One throughput run of either system. CPU in µs per delivery; RSS in MB. */
interface Run {
  rate: number;
  workerCpu: number;
  pgCpu: number;
  peakRssMb: number;
  note: string;
}

/** Herald, end to end: JOBS due jobs over `accounts` accounts, `workers` worker processes; until every outcome is durable. */
async function heraldThroughput(db: Db, receiver: Receiver, workers: number, accountCount: number): Promise<Run> {
  const { name, url } = await db.create();
  try {
    const api = await startHerald(url, { WORKER_ENABLED: 'false' });
    const accounts = await createAccounts(api.url, receiver.url, accountCount);
    await createPosts(api.url, accounts, JOBS);
    await stopChild(api.child);
    await db.with(url, (c) => c.query('VACUUM ANALYZE'));
    await receiver.reset();
    const commitsBefore = await commits(db, name);
    const procs = await Promise.all(Array.from({ length: workers }, () => startHerald(url, { WORKER_ENABLED: 'true' })));
    // CPU spent booting (Nest, TypeORM, migrations check) is not delivery work.
    const bootCpu = procs.map((p) => childCpu(p.child));
    const pg = new PgCpu(db, name);
    await pg.start();
    // Cheap polling (the receiver's count) until every job arrived, then the database until
    // every outcome is durable: polling must not steal the CPU it measures.
    await waitFor(async () => (await receiver.stats()).count >= JOBS, 300_000, 'Herald deliveries', 50);
    const done = await waitFor(
      async () =>
        db.with(
          url,
          async (c) =>
            (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_state WHERE status = 'succeeded'`)).rows[0].n >= JOBS,
        ),
      300_000,
      'Herald outcomes',
      10,
    );
    const pgCpuUs = await pg.stop();
    const usage = procs.map((p) => childCpu(p.child)).map((u, i) => u - bootCpu[i]);
    const rss = procs.map((p) => peakRssMb(p.child));
    const stats = await receiver.stats();
    const attempts = await db.with(url, async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM attempts`)).rows[0].n);
    const commitsAfter = await commits(db, name);
    await Promise.all(procs.map((p) => stopChild(p.child)));
    const seconds = (done - stats.first) / 1000;
    return {
      rate: JOBS / seconds,
      workerCpu: usage.reduce((a, b) => a + b, 0) / JOBS,
      pgCpu: pgCpuUs / JOBS,
      peakRssMb: Math.max(...rss),
      note: `${fmt(attempts)} attempt rows, receiver saw ${fmt(stats.count)}, ${fmt((commitsAfter - commitsBefore) / JOBS, 3)} commits/delivery`,
    };
  } finally {
    await db.drop(name);
  }
}

/**
 * The events section's run (bench/events.ts): `JOBS / 2` posts over 20 webhook accounts, made
 * with the worker off, then one worker process delivers them; with `endpoint`, an event
 * endpoint (on the same receiver, path /events) takes post.published. Both runs alike otherwise.
 */
async function eventsBurst(db: Db, receiver: Receiver, endpoint: boolean): Promise<EventsBurst> {
  const posts = Math.round(JOBS / 2);
  const { name, url } = await db.create();
  try {
    const api = await startHerald(url, { WORKER_ENABLED: 'false' });
    const accounts = await createAccounts(api.url, receiver.url, ACCOUNTS);
    if (endpoint) await call(api.url, 'POST', '/v1/event-subscriptions', { url: `${receiver.url}/events`, events: ['post.published'] });
    await createPosts(api.url, accounts, posts);
    await stopChild(api.child);
    await db.with(url, (c) => c.query('VACUUM ANALYZE'));
    await receiver.reset(true);
    const worker = await startHerald(url, { WORKER_ENABLED: 'true' });
    const succeeded = (events: boolean) =>
      db.with(
        url,
        async (c) =>
          (
            await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded' AND (event_id IS NOT NULL) = $1`, [
              events,
            ])
          ).rows[0].n,
      );
    const postsDone = await waitFor(async () => (await succeeded(false)) >= posts, 600_000, 'the posts', 20);
    const allDone = endpoint ? await waitFor(async () => (await succeeded(true)) >= posts, 600_000, 'the events', 20) : postsDone;
    const stats = await receiver.stats();
    const written = await db.with(
      url,
      async (c) =>
        (
          await c.query<{ n: number; d: number; ids: string[] }>(
            `SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS d, coalesce(array_agg(event_id::text), '{}') AS ids FROM jobs WHERE event_id IS NOT NULL`,
          )
        ).rows[0],
    );
    await stopChild(worker.child);
    const eventIds = new Set(written.ids);
    const receivedDistinct = Object.keys(stats.arrivals).filter((k) => eventIds.has(k)).length;
    return {
      posts,
      postsPerSecond: posts / ((postsDone - stats.first) / 1000),
      deliveries: written.n,
      distinctIds: written.d,
      // The receiver counts every request; the posts' each arrived once at least (their keys are not event ids).
      received: stats.count - posts,
      receivedDistinct,
      allDoneSeconds: (allDone - stats.first) / 1000,
    };
  } finally {
    await db.drop(name);
  }
}

/** Commits on this database so far (pg_stat_database.xact_commit). */
async function commits(db: Db, name: string): Promise<number> {
  return db.admin(async (c) =>
    Number(
      (await c.query<{ xact_commit: string }>(`SELECT xact_commit FROM pg_stat_database WHERE datname = $1`, [name])).rows[0]
        ?.xact_commit ?? 0,
    ),
  );
}

/** User+system CPU time (µs) of a process so far (Linux /proc; 0 when it is gone). */
function procCpu(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(stat[11]) + Number(stat[12])) / 100) * 1e6;
  } catch {
    return 0;
  }
}

/**
 * PostgreSQL's CPU for one database's work (the server is local: Linux /proc): every backend
 * connected to that database, sampled every 200 ms so a connection that closes before the end
 * keeps what it used (its CPU since it started), plus what the server's shared background
 * processes (WAL writer, checkpointer, background writer, autovacuum) used meanwhile. Other
 * databases' backends are left out, the benchmark's own polling included.
 */
class PgCpu {
  /** pid → [CPU when first seen (0 for backends that started after start()), highest since]. */
  private readonly seen = new Map<number, [number, number]>();
  private started = false;
  private timer: NodeJS.Timeout | null = null;
  private sampling: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly datname: string,
  ) {}

  private async pids(): Promise<{ pid: number; ours: boolean }[]> {
    return this.db.admin(
      async (c) =>
        (
          await c.query<{ pid: number; ours: boolean }>(
            `SELECT pid, datname = $1 AS ours FROM pg_stat_activity
           WHERE datname = $1 OR backend_type IN ('walwriter', 'checkpointer', 'background writer', 'autovacuum launcher', 'autovacuum worker')`,
            [this.datname],
          )
        ).rows,
    );
  }

  private async sample(): Promise<void> {
    for (const { pid, ours } of await this.pids()) {
      const cpu = procCpu(pid);
      const s = this.seen.get(pid);
      if (s) s[1] = Math.max(s[1], cpu);
      else this.seen.set(pid, [this.started && ours ? 0 : cpu, cpu]);
    }
  }

  /** Counts from now on: what existing processes used so far is left out. */
  async start(): Promise<void> {
    await this.sample();
    this.started = true;
    this.timer = setInterval(() => {
      this.sampling = this.sampling.then(() => this.sample()).catch(() => undefined);
    }, 200);
  }

  /** µs used since start. */
  async stop(): Promise<number> {
    if (this.timer) clearInterval(this.timer);
    await this.sampling;
    await this.sample();
    let total = 0;
    for (const [first, last] of this.seen.values()) total += last - first;
    return total;
  }
}

/** User+system CPU time of a child process so far, in µs (Linux /proc). */
function childCpu(child: ChildProcess): number {
  return child.pid === undefined ? 0 : procCpu(child.pid);
}

/** Peak resident set of a child process so far (VmHWM), in MB. */
function peakRssMb(child: ChildProcess): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** graphile-worker's throughput; `history`: batched, its task also inserting the attempt row a user keeps (bench/history-table.ts). */
async function graphileThroughput(db: Db, receiver: Receiver, mode: 'default' | 'batched' | 'history'): Promise<Run> {
  const { name, url } = await db.create();
  try {
    await runGraphileMigrations({ connectionString: url });
    if (mode === 'history') await db.with(url, (c) => c.query(HISTORY_TABLE_SQL));
    const utils = await makeWorkerUtils({ connectionString: url });
    const specs = Array.from({ length: JOBS }, (_, i) => ({
      identifier: 'deliver',
      payload: { url: `${receiver.url}/hook`, key: `gw-${i}`, text: `bench post ${i}` },
    }));
    for (let i = 0; i < specs.length; i += 5000) await utils.addJobs(specs.slice(i, i + 5000));
    await utils.release();
    await db.with(url, (c) => c.query('VACUUM ANALYZE'));
    await receiver.reset();
    const { child } = await startChild([path.join(ROOT, 'dist/bench/graphile-runner.js'), url, mode, '100'], {}, /READY/);
    const bootCpu = childCpu(child);
    const pg = new PgCpu(db, name);
    await pg.start();
    await waitFor(async () => (await receiver.stats()).count >= JOBS, 300_000, `graphile-worker (${mode})`, 50);
    const done = await waitFor(
      async () =>
        db.with(url, async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM graphile_worker.jobs`)).rows[0].n === 0),
      300_000,
      `graphile-worker (${mode}) completions`,
      10,
    );
    const pgCpuUs = await pg.stop();
    const workerCpuUs = childCpu(child) - bootCpu;
    const rss = peakRssMb(child);
    const stats = await receiver.stats();
    await stopChild(child);
    return {
      rate: JOBS / ((done - stats.first) / 1000),
      workerCpu: workerCpuUs / JOBS,
      pgCpu: pgCpuUs / JOBS,
      peakRssMb: rss,
      note: `receiver saw ${fmt(stats.count)}`,
    };
  } finally {
    await db.drop(name);
  }
}

/** Before a measured write run: statistics and visibility settled (VACUUM ANALYZE), and a checkpoint, so both systems start with no full-page image written since. */
async function prepareWrites(db: Db, url: string): Promise<void> {
  if (process.env.BENCH_JOBS_FILLFACTOR)
    await db.with(url, async (c) => {
      const has = (await c.query(`SELECT 1 FROM pg_tables WHERE tablename = 'job_state' AND schemaname = 'public'`)).rowCount;
      if (has) {
        await c.query(`ALTER TABLE job_state SET (fillfactor = ${Number(process.env.BENCH_JOBS_FILLFACTOR)})`);
        await c.query('VACUUM FULL job_state');
      }
    });
  await db.with(url, (c) => c.query('VACUUM ANALYZE'));
  await db.admin((c) => c.query('CHECKPOINT')).catch(() => undefined); // a non-superuser cannot: then the first run pays more full-page images
}

/** Reads of the database by the bench during a write run (each one commits), so they can be taken out of the commit count. */
async function countedPoll(url: string, db: Db, sql: string, done: (n: number) => boolean, what: string): Promise<number> {
  let polls = 0;
  await waitFor(
    async () => {
      polls += 1;
      return done(await db.with(url, async (c) => (await c.query<{ n: number }>(sql)).rows[0].n));
    },
    300_000,
    what,
    100,
  );
  return polls;
}

/** Herald's writes for JOBS deliveries (1 worker process, ACCOUNTS accounts), the jobs created beforehand through the API. */
async function heraldWrites(db: Db, receiver: Receiver): Promise<Writes> {
  const { name, url } = await db.create();
  try {
    const api = await startHerald(url, { WORKER_ENABLED: 'false' });
    const accounts = await createAccounts(api.url, receiver.url, ACCOUNTS);
    await createPosts(api.url, accounts, JOBS);
    await stopChild(api.child);
    await prepareWrites(db, url);
    await receiver.reset();
    const before = await writeSnapshot(db.serverUrl, url, name);
    const worker = await startHerald(url, { WORKER_ENABLED: 'true' });
    await waitFor(async () => (await receiver.stats()).count >= JOBS, 300_000, 'Herald deliveries', 50);
    const polls = await countedPoll(
      url,
      db,
      `SELECT count(*)::int AS n FROM job_state WHERE status = 'succeeded'`,
      (n) => n >= JOBS,
      'Herald outcomes',
    );
    await stopChild(worker.child);
    return writesBetween(before, await writeSnapshot(db.serverUrl, url, name), JOBS, polls);
  } finally {
    await db.drop(name);
  }
}

/** graphile-worker's writes for JOBS jobs (batched, as in the throughput run); `history`: its task also inserts the attempt row. */
async function graphileWrites(db: Db, receiver: Receiver, history: boolean): Promise<Writes> {
  const { name, url } = await db.create();
  try {
    await runGraphileMigrations({ connectionString: url });
    if (history) await db.with(url, (c) => c.query(HISTORY_TABLE_SQL));
    const utils = await makeWorkerUtils({ connectionString: url });
    const specs = Array.from({ length: JOBS }, (_, i) => ({
      identifier: 'deliver',
      payload: { url: `${receiver.url}/hook`, key: `gw-${i}`, text: `bench post ${i}` },
    }));
    for (let i = 0; i < specs.length; i += 5000) await utils.addJobs(specs.slice(i, i + 5000));
    await utils.release();
    await prepareWrites(db, url);
    await receiver.reset();
    const before = await writeSnapshot(db.serverUrl, url, name);
    const mode = history ? 'history' : 'batched';
    const { child } = await startChild([path.join(ROOT, 'dist/bench/graphile-runner.js'), url, mode, '100'], {}, /READY/);
    await waitFor(async () => (await receiver.stats()).count >= JOBS, 300_000, `graphile-worker (${mode})`, 50);
    let polls = await countedPoll(
      url,
      db,
      `SELECT count(*)::int AS n FROM graphile_worker.jobs`,
      (n) => n === 0,
      `graphile-worker (${mode}) completions`,
    );
    if (history) {
      polls += await countedPoll(url, db, `SELECT count(*)::int AS n FROM delivery_attempts`, (n) => n >= JOBS, 'history rows');
    }
    await stopChild(child);
    return writesBetween(before, await writeSnapshot(db.serverUrl, url, name), JOBS, polls);
  } finally {
    await db.drop(name);
  }
}

/** Per key, the median of the runs (null when a run has none). */
function medianTotals(runs: WriteTotals[]): WriteTotals {
  const keys = Object.keys(runs[0]) as (keyof WriteTotals)[];
  const out = {} as Record<keyof WriteTotals, number | null>;
  for (const k of keys) {
    const xs = runs.map((r) => r[k]);
    out[k] = xs.some((x) => x === null) ? null : median(xs as number[]);
  }
  return out as unknown as WriteTotals;
}

/** The writes section's table: one row per figure, a column per system, then the ratios. */
function writesTable(t: WriteTotals[], labels: string[]): string[] {
  const cell = (x: number | null, digits: number) => (x === null ? '—' : fmt(x, digits));
  const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? '—' : `${fmt(a / b, 2)}×`);
  const share = (x: WriteTotals) => (x.upd > 0 ? x.hot / x.upd : null);
  const rows: [string, (x: WriteTotals) => number | null, number, boolean][] = [
    ['WAL bytes / delivery', (x) => x.walBytes, 0, true],
    ['WAL records / delivery', (x) => x.walRecords, 2, true],
    ['full-page images / delivery', (x) => x.walFpi, 3, true],
    ['commits / delivery', (x) => x.commits, 3, true],
    ['rows inserted / delivery', (x) => x.ins, 2, true],
    ['rows updated / delivery', (x) => x.upd, 2, true],
    ['  of which HOT / delivery', (x) => x.hot, 2, true],
    [
      '  HOT share of updates',
      (x) => {
        const h = share(x);
        return h === null ? null : h * 100;
      },
      0,
      false,
    ],
    ['rows deleted / delivery', (x) => x.del, 2, true],
    ['index entries / delivery (≤)', (x) => x.indexEntries, 2, true],
    ['index bytes growth / delivery', (x) => x.indexBytes, 0, true],
    ['heap bytes growth / delivery', (x) => x.heapBytes, 0, true],
    ['dead tuples left (all)', (x) => x.dead, 0, true],
    ['autovacuum runs (all)', (x) => x.autovacuum, 0, true],
    ['autoanalyze runs (all)', (x) => x.autoanalyze, 0, true],
  ];
  const header = ['', ...labels, `${labels[0]} / ${labels[1]}`, `${labels[0]} / ${labels[2]}`];
  const body = rows.map(([what, get, digits, ratios]) => [
    what,
    ...t.map((x) => cell(get(x), digits) + (what.includes('share') && get(x) !== null ? ' %' : '')),
    ratios ? ratio(get(t[0]), get(t[1])) : '',
    ratios ? ratio(get(t[0]), get(t[2])) : '',
  ]);
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...body.map(line)];
}

/** One system's tables, per delivery. */
function writesPerTable(label: string, w: Writes): string[] {
  const per = (x: number, digits = 2) => fmt(x / w.deliveries, digits);
  return [...w.tables]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([name, t]) =>
        `  ${label} ${name}: ${per(t.ins)} ins, ${per(t.upd)} upd (${per(t.hot)} HOT${t.upd > 0 ? `, ${fmt((100 * t.hot) / t.upd)} %` : ''}), ${per(t.del)} del per delivery; heap ${t.heapBytes >= 0 ? '+' : ''}${per(t.heapBytes, 0)} B, indexes ${t.indexBytes >= 0 ? '+' : ''}${per(t.indexBytes, 0)} B per delivery (${t.rowIndexes} per-row indexes); ${fmt(t.dead)} dead tuples left; autovacuum ${t.autovacuum}, autoanalyze ${t.autoanalyze}`,
    );
}

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

interface Intake {
  rate: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** CPU per accepted request, µs: the server process, and PostgreSQL. */
  cpu: number;
  pgCpu: number;
}

async function load(
  db: Db,
  datname: string,
  server: ChildProcess,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<Intake> {
  const pg = new PgCpu(db, datname);
  await pg.start();
  const cpuBefore = childCpu(server);
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    connections: INTAKE_CONNECTIONS,
    duration: INTAKE_SECONDS,
  });
  const cpu = childCpu(server) - cpuBefore;
  const pgCpu = await pg.stop();
  const n = Math.max(1, result.requests.total);
  return {
    rate: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    cpu: cpu / n,
    pgCpu: pgCpu / n,
  };
}

/**
 * POST /v1/posts (commit, then 201; one target) beside the bare baseline (bench/intake-baseline.ts),
 * same connections, same database server, alternating, RUNS runs each.
 */
async function intake(db: Db, receiver: Receiver): Promise<{ herald: Intake[]; bare: Intake[]; rows: number; accepted: number }> {
  const { name, url } = await db.create();
  try {
    const api = await startHerald(url, { WORKER_ENABLED: 'false' });
    const [account] = await createAccounts(api.url, receiver.url, 1);
    const { child: bare, match } = await startChild([path.join(ROOT, 'dist/bench/intake-baseline.js'), url, '20'], {}, /PORT (\d+)/);
    const herald: Intake[] = [];
    const bareRuns: Intake[] = [];
    try {
      for (let r = 0; r < RUNS; r++) {
        herald.push(
          await load(
            db,
            name,
            api.child,
            `${api.url}/v1/posts`,
            { authorization: `Bearer ${KEY}` },
            JSON.stringify({ text: 'Launch day!', targets: [{ accountId: account }] }),
          ),
        );
        bareRuns.push(await load(db, name, bare, `http://127.0.0.1:${match[1]}/posts`, {}, JSON.stringify({ text: 'Launch day!' })));
      }
    } finally {
      await stopChild(api.child);
      await stopChild(bare);
    }
    const rows = await db.with(url, async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM posts`)).rows[0].n);
    const accepted = herald.reduce((a, x) => a + x.rate * INTAKE_SECONDS, 0);
    return { herald, bare: bareRuns, rows, accepted };
  } finally {
    await db.drop(name);
  }
}

/** The claim's candidate scan, exactly as the worker runs it, for up to 100 jobs. */
const CANDIDATES_LIMIT = 100;

/** Median ms of BEGIN; candidate scan; ROLLBACK — over 200 runs (after 20 to warm up), or 20 s. */
async function measureClaim(c: Client): Promise<number> {
  const times: number[] = [];
  const until = Date.now() + 20_000;
  for (let i = 0; i < 220 && (i < 40 || Date.now() < until); i++) {
    const t = process.hrtime.bigint();
    await c.query('BEGIN');
    await c.query({
      name: 'bench_candidates',
      text: CLAIM_CANDIDATES_SQL,
      values: [CANDIDATES_LIMIT, 'bench', 2, BENCH_SLOW_START.rampMs, BENCH_SLOW_START.ratePerS],
    });
    await c.query('ROLLBACK');
    if (i >= 20) times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return median(times);
}

/** Accounts copied from `source` by SQL (10,000 through the API would take a while): idle, nothing due. */
async function addIdleAccounts(c: Client, n: number): Promise<void> {
  await c.query(
    `INSERT INTO accounts
     SELECT (jsonb_populate_record(NULL::accounts, to_jsonb(a) || jsonb_build_object('id', gen_random_uuid(), 'name', 'idle ' || g))).*
     FROM (SELECT * FROM accounts ORDER BY created_at LIMIT 1) a, generate_series(1, $1) g`,
    [n],
  );
  await c.query('VACUUM ANALYZE accounts');
}

/**
 * The round's cost as idle accounts pile up: the claim scan with 20 accounts (each with due
 * work, 2,000 jobs) and again with 9,980 more accounts that have nothing due.
 */
async function accountScaling(db: Db): Promise<{ busy: number; idle: number }> {
  const { name, url } = await db.create();
  try {
    const api = await startHerald(url, { WORKER_ENABLED: 'false' });
    const accounts = await createAccounts(api.url, 'http://127.0.0.1:9', ACCOUNTS);
    await createPosts(api.url, accounts, 2000);
    await stopChild(api.child);
    await db.with(url, (c) => c.query('VACUUM ANALYZE'));
    const busy = await db.with(url, measureClaim);
    await db.with(url, (c) => addIdleAccounts(c, IDLE_ACCOUNTS));
    const idle = await db.with(url, measureClaim);
    return { busy, idle };
  } finally {
    await db.drop(name);
  }
}

/** `n` finished jobs (90 % succeeded, 10 % dead) of the 20 accounts, under old posts of 20 targets. */
async function addFinishedJobs(c: Client, n: number): Promise<void> {
  const posts = Math.ceil(n / ACCOUNTS);
  const batch = `old ${randomBytes(4).toString('hex')}`;
  await c.query(
    `INSERT INTO posts (id, workspace_id, text, scheduled_at, created_at)
     SELECT gen_random_uuid(), (SELECT workspace_id FROM accounts LIMIT 1), $2, now() - interval '30 days', now() - interval '30 days'
     FROM generate_series(1, $1)`,
    [posts, batch],
  );
  await c.query(
    `WITH src AS MATERIALIZED (
       SELECT gen_random_uuid() AS id, p.id AS post_id, a.id AS account_id, a.workspace_id, (p.n + a.n) % 10 = 0 AS dead, p.n
       FROM (SELECT id, row_number() OVER () AS n FROM posts WHERE text = $1) p
       CROSS JOIN (SELECT id, workspace_id, row_number() OVER (ORDER BY created_at) AS n FROM accounts) a
     ), w AS (
       INSERT INTO job_payloads (id, workspace_id, post_id, account_id, provider, idempotency_key, payload)
       SELECT id, workspace_id, post_id, account_id, 'webhook', post_id || '-' || account_id, '{"text":"old"}' FROM src
     )
     INSERT INTO job_state (job_id, account_id, workspace_id, status, run_at, dead_reason, error_class, last_error, attempt_count, finished_at)
     SELECT id, account_id, workspace_id, CASE WHEN dead THEN 'dead' ELSE 'succeeded' END, now() - interval '30 days',
            CASE WHEN dead THEN 'permanent' END, CASE WHEN dead THEN 'permanent' ELSE 'success' END,
            CASE WHEN dead THEN 'HTTP 410 Gone' END, 1, now() - interval '30 days' + (n || ' seconds')::interval
     FROM src`,
    [batch],
  );
  await c.query('VACUUM ANALYZE');
}

/**
 * Scale of data: the claim with 0, 100,000 and 1,000,000 finished jobs in the table (2,000 due
 * over 20 accounts), then GET /v1/dlq's first page (p99 of 200 sequential requests) with the
 * 100,000 dead jobs among them.
 */
async function dataScaling(db: Db): Promise<{ claims: [number, number][]; dlq: { p50: number; p99: number; dead: number }; plan: string }> {
  const { name, url } = await db.create();
  try {
    const api = await startHerald(url, { WORKER_ENABLED: 'false' });
    const accounts = await createAccounts(api.url, 'http://127.0.0.1:9', ACCOUNTS);
    await createPosts(api.url, accounts, 2000);
    await stopChild(api.child);
    await db.with(url, (c) => c.query('VACUUM ANALYZE'));
    const claims: [number, number][] = [];
    let finished = 0;
    for (const target of [0, 100_000, 1_000_000].map((x) => Math.round(x * SCALE))) {
      if (target > finished) {
        await db.with(url, (c) => addFinishedJobs(c, target - finished));
        finished = target;
      }
      claims.push([finished, await db.with(url, measureClaim)]);
    }
    const plan = await db.with(url, async (c) =>
      (
        await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${CLAIM_CANDIDATES_SQL}`, [
          CANDIDATES_LIMIT,
          'bench',
          2,
          BENCH_SLOW_START.rampMs,
          BENCH_SLOW_START.ratePerS,
        ])
      ).rows
        .map((r) => `    ${r['QUERY PLAN']}`)
        .join('\n'),
    );
    const dead = await db.with(
      url,
      async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_state WHERE status = 'dead'`)).rows[0].n,
    );
    const herald = await startHerald(url, { WORKER_ENABLED: 'false' });
    const times: number[] = [];
    try {
      for (let i = 0; i < 220; i++) {
        const t = process.hrtime.bigint();
        const page = await call<{ data: unknown[] }>(herald.url, 'GET', '/v1/dlq');
        if (i >= 20) times.push(Number(process.hrtime.bigint() - t) / 1e6);
        if (page.data.length === 0) throw new Error('bench: the DLQ page is empty');
      }
    } finally {
      await stopChild(herald.child);
    }
    return { claims, dlq: { p50: percentile(times, 50), p99: percentile(times, 99), dead }, plan };
  } finally {
    await db.drop(name);
  }
}

const loadavg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const lines: string[] = [];
  const results = path.join(ROOT, 'bench/results/latest.txt');
  fs.mkdirSync(path.dirname(results), { recursive: true });
  const say = (s: string) => {
    console.log(s);
    lines.push(s);
    // Written as it goes: a run cut short still leaves what it measured.
    fs.writeFileSync(results, lines.join('\n') + '\n');
  };
  const began = Date.now();
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
  say(`load average at start: ${loadavg()}`);
  say(
    `runs: ${RUNS} per throughput figure (median [min–max]); scale ${SCALE} (${fmt(JOBS)} jobs per throughput run)${SCALE !== 1 || RUNS < 5 ? ' — QUICK MODE, not a result' : ''}`,
  );
  say('noise: a shared 2-core VM; the receiver, PostgreSQL and the workers share those cores: compare ratios within one run.');
  const receiver = await startReceiver();
  const verdict: string[] = [];
  const target = (what: string, ok: boolean, detail: string) => verdict.push(`  ${ok ? 'met    ' : 'NOT MET'} ${what}: ${detail}`);
  const recorded: Figure[] = [];
  const figuresFile = path.join(ROOT, 'bench/results/latest.json');
  const figure = (key: string, what: string, value: number, better: Better, digits = 0) => {
    recorded.push({ key, what, value, better, digits });
    fs.writeFileSync(figuresFile, JSON.stringify({ at: new Date(began).toISOString(), figures: recorded }, null, 2) + '\n');
  };
  try {
    if (section('ceiling')) say(`receiver ceiling (autocannon, 100 connections, 5 s): ${fmt(await receiverCeiling(receiver))} req/s`);

    if (section('throughput')) {
      say(`\n## Throughput: ${fmt(JOBS)} webhook jobs due at once over ${ACCOUNTS} accounts (≤ 5 in flight each), concurrency 100`);
      const h: Run[] = [];
      const g: Run[] = [];
      const gh: Run[] = [];
      for (let r = 0; r < RUNS; r++) {
        // Alternating, so drifting load on the machine falls on both alike.
        const hr = await heraldThroughput(db, receiver, 1, ACCOUNTS);
        say(
          `  run ${r + 1} herald (1 process): ${fmt(hr.rate)} deliveries/s; worker ${fmt(hr.workerCpu)} µs + PostgreSQL ${fmt(hr.pgCpu)} µs CPU/delivery; peak RSS ${fmt(hr.peakRssMb)} MB; ${hr.note}`,
        );
        h.push(hr);
        const gr = await graphileThroughput(db, receiver, 'batched');
        say(
          `  run ${r + 1} graphile-worker batched: ${fmt(gr.rate)} jobs/s; worker ${fmt(gr.workerCpu)} µs + PostgreSQL ${fmt(gr.pgCpu)} µs CPU/job; peak RSS ${fmt(gr.peakRssMb)} MB; ${gr.note}`,
        );
        g.push(gr);
        const hs = await graphileThroughput(db, receiver, 'history');
        say(
          `  run ${r + 1} graphile-worker batched + attempt row: ${fmt(hs.rate)} jobs/s; worker ${fmt(hs.workerCpu)} µs + PostgreSQL ${fmt(hs.pgCpu)} µs CPU/job; peak RSS ${fmt(hs.peakRssMb)} MB; ${hs.note}`,
        );
        gh.push(hs);
      }
      const hRate = median(h.map((x) => x.rate));
      const gRate = median(g.map((x) => x.rate));
      const hCpu = median(h.map((x) => x.workerCpu + x.pgCpu));
      const gCpu = median(g.map((x) => x.workerCpu + x.pgCpu));
      say(`herald, 1 worker process: ${spread(h.map((x) => x.rate))} deliveries/s`);
      say(`graphile-worker 0.17.3 batched (localQueue 500, completeJobBatchDelay 0): ${spread(g.map((x) => x.rate))} jobs/s`);
      say(
        `ratio herald / graphile-worker batched: ${fmt(hRate / gRate, 2)}× (per-run ratios ${h.map((x, i) => fmt(x.rate / g[i].rate, 2)).join(', ')})`,
      );
      say(
        `CPU per delivery, herald: worker ${spread(
          h.map((x) => x.workerCpu),
          0,
        )} µs, PostgreSQL ${spread(h.map((x) => x.pgCpu))} µs, total ${fmt(hCpu)} µs`,
      );
      say(
        `CPU per delivery, graphile-worker: worker ${spread(
          g.map((x) => x.workerCpu),
          0,
        )} µs, PostgreSQL ${spread(g.map((x) => x.pgCpu))} µs, total ${fmt(gCpu)} µs`,
      );
      say(`ratio of total CPU per delivery herald / graphile-worker: ${fmt(hCpu / gCpu, 2)}×`);
      const rss = Math.max(...h.map((x) => x.peakRssMb));
      say(
        `peak RSS of a herald worker process (VmHWM, highest of the runs): ${fmt(rss)} MB (graphile-worker: ${fmt(Math.max(...g.map((x) => x.peakRssMb)))} MB)`,
      );
      const ghRate = median(gh.map((x) => x.rate));
      say(`graphile-worker batched + attempt row: ${spread(gh.map((x) => x.rate))} jobs/s; ratio herald / it: ${fmt(hRate / ghRate, 2)}×`);
      const hPg = median(h.map((x) => x.pgCpu));
      const gPg = median(g.map((x) => x.pgCpu));
      // Issue 32's targets (a session before this one: issue 21's, ≥ 1.25× and ≤ 250 MB).
      target(
        'PostgreSQL CPU per delivery ≤ 2× graphile-worker batched (Herald with its attempt row)',
        hPg <= 2 * gPg,
        `${fmt(hPg)} vs ${fmt(gPg)} µs (${fmt(hPg / gPg, 2)}×)`,
      );
      target('throughput ≥ 1.0× graphile-worker batched', hRate / gRate >= 1, `${fmt(hRate / gRate, 2)}×`);
      target('throughput ≥ 1.25× graphile-worker batched (stretch)', hRate / gRate >= 1.25, `${fmt(hRate / gRate, 2)}×`);
      target('throughput ≥ 1.5× graphile-worker batched + attempt row', hRate / ghRate >= 1.5, `${fmt(hRate / ghRate, 2)}×`);
      target('peak worker RSS ≤ 200 MB', rss <= 200, `${fmt(rss)} MB`);
      figure('throughput.herald', 'Herald deliveries/s (1 process, 20 accounts)', hRate, 'higher');
      figure('throughput.ratio', 'throughput Herald / graphile-worker batched', hRate / gRate, 'higher', 2);
      figure('throughput.ratio-history', 'throughput Herald / graphile-worker + attempt row', hRate / ghRate, 'higher', 2);
      figure('cpu.worker', 'worker CPU per delivery (µs)', median(h.map((x) => x.workerCpu)), 'lower');
      figure('cpu.pg', 'PostgreSQL CPU per delivery (µs)', hPg, 'lower');
      figure('cpu.pg-ratio', 'PostgreSQL CPU per delivery / graphile-worker', hPg / gPg, 'lower', 2);
      figure('cpu.total-ratio', 'total CPU per delivery / graphile-worker', hCpu / gCpu, 'lower', 2);
      figure('rss.peak', 'peak worker RSS (MB)', rss, 'lower');
    }

    if (section('writes')) {
      say(
        `\n## Writes: PostgreSQL's work per delivery, ${fmt(JOBS)} deliveries each, ${WRITES_RUNS} run(s) per system (medians); the job rows exist before each run (enqueue not counted), the workers are stopped before the second snapshot`,
      );
      const labels = ['herald', 'graphile', 'graphile+history'];
      const all: Writes[][] = [[], [], []];
      for (let r = 0; r < WRITES_RUNS; r++) {
        const got = [await heraldWrites(db, receiver), await graphileWrites(db, receiver, false), await graphileWrites(db, receiver, true)];
        got.forEach((w, i) => {
          all[i].push(w);
          const t = totals(w);
          say(
            `  run ${r + 1} ${labels[i]}: WAL ${fmt(t.walBytes)} B/delivery (${t.walFpi === null ? '—' : fmt(t.walFpi, 3)} FPI), ${fmt(t.ins, 2)} ins + ${fmt(t.upd, 2)} upd (${fmt(t.hot, 2)} HOT) + ${fmt(t.del, 2)} del rows, indexes +${fmt(t.indexBytes)} B, ${fmt(t.commits, 3)} commits per delivery; WAL ${w.walRange}`,
          );
        });
      }
      const t = all.map((runsOf) => medianTotals(runsOf.map(totals)));
      say(
        "herald: 1 worker process, 20 accounts; graphile: graphile-worker 0.17.3 batched (as in the throughput run); graphile+history: the same, its task also inserting the attempt row (bench/history-table.ts: Herald's attempts row and indexes)",
      );
      for (const l of writesTable(t, labels)) say(l);
      say(
        "index entries: an upper bound, (inserts + non-HOT updates) × the table's per-row indexes (partial indexes take only matching rows; BRIN left out); WAL is the server's (the bench runs one thing at a time)",
      );
      say('per table (the last run):');
      all.forEach((runsOf, i) => {
        for (const l of writesPerTable(labels[i], runsOf[runsOf.length - 1])) say(l);
      });
      figure('writes.wal', 'WAL per delivery (B)', t[0].walBytes, 'lower');
      figure('writes.wal-ratio', 'WAL per delivery / graphile-worker', t[0].walBytes / t[1].walBytes, 'lower', 2);
      target(
        'WAL per delivery ≤ 2× graphile-worker (which keeps no history)',
        t[0].walBytes <= 2 * t[1].walBytes,
        `${fmt(t[0].walBytes)} vs ${fmt(t[1].walBytes)} B (${fmt(t[0].walBytes / t[1].walBytes, 2)}×; with history ${fmt(t[2].walBytes)} B, ${fmt(t[0].walBytes / t[2].walBytes, 2)}×)`,
      );
    }

    if (section('statements')) {
      say(
        `\n## The round's job statements on their own: ${fmt(JOBS)} jobs, rounds of 100 (record, candidates, claim, commit), backend CPU per job`,
      );
      const runs: StatementCosts[] = [];
      for (let r = 0; r < RUNS; r++) {
        const { name, url } = await db.create();
        try {
          runs.push(await roundStatements(url, JOBS));
        } finally {
          await db.drop(name);
        }
      }
      const part = (k: keyof StatementCosts) =>
        spread(
          runs.map((x) => x[k]),
          1,
        );
      figure(
        'statements.total',
        "the round's job statements, database CPU per job (µs)",
        median(runs.map((x) => x.candidates + x.claim + x.record + x.commit)),
        'lower',
        1,
      );
      say(
        `candidates ${part('candidates')} µs, claim ${part('claim')} µs, record (outcome + attempt row) ${part('record')} µs, commit ${part('commit')} µs; total ${spread(
          runs.map((x) => x.candidates + x.claim + x.record + x.commit),
          1,
        )} µs per job`,
      );
    }

    if (section('curve')) {
      say(`\n## Processes: ${fmt(JOBS)} jobs over ${CURVE_ACCOUNTS} accounts, 1 → 2 → 3 worker processes`);
      const curve: number[] = [];
      for (const workers of [1, 2, 3]) {
        const runs: Run[] = [];
        for (let r = 0; r < RUNS; r++) runs.push(await heraldThroughput(db, receiver, workers, CURVE_ACCOUNTS));
        curve.push(median(runs.map((x) => x.rate)));
        say(
          `herald, ${workers} process(es), ${CURVE_ACCOUNTS} accounts: ${spread(runs.map((x) => x.rate))} deliveries/s; worker ${fmt(median(runs.map((x) => x.workerCpu)))} µs + PostgreSQL ${fmt(median(runs.map((x) => x.pgCpu)))} µs CPU/delivery; ${runs[0].note}`,
        );
      }
      say(`curve 1 → 2 → 3 processes: 1.00× → ${fmt(curve[1] / curve[0], 2)}× → ${fmt(curve[2] / curve[0], 2)}×`);
      figure('curve.two', '2 processes / 1 (200 accounts)', curve[1] / curve[0], 'higher', 2);
      target('2 processes ≥ 1.3× one (200 accounts)', curve[1] / curve[0] >= 1.3, `${fmt(curve[1] / curve[0], 2)}×`);
    }

    if (section('accounts')) {
      say(
        `\n## Accounts: the claim's scan (BEGIN; candidates; ROLLBACK, median of 200) with ${ACCOUNTS} accounts, then ${fmt(ACCOUNTS + IDLE_ACCOUNTS)} (${fmt(IDLE_ACCOUNTS)} idle)`,
      );
      const a = await accountScaling(db);
      say(
        `claim with ${ACCOUNTS} accounts: ${fmt(a.busy, 2)} ms; with ${fmt(ACCOUNTS + IDLE_ACCOUNTS)} accounts: ${fmt(a.idle, 2)} ms; ratio ${fmt(a.idle / a.busy, 2)}×`,
      );
      figure('accounts.ratio', 'claim with 9,980 idle accounts / with 20', a.idle / a.busy, 'lower', 2);
      target(
        `round cost with ${fmt(IDLE_ACCOUNTS)} idle accounts ≤ 1.2× with ${ACCOUNTS}`,
        a.idle / a.busy <= 1.2,
        `${fmt(a.idle / a.busy, 2)}×`,
      );
    }

    if (section('trickle')) {
      say(`\n## Latency: 50 jobs/s for ${TRICKLE_SECONDS} s, each due 100 ms after it is created, due → received`);
      const h = await heraldTrickle(db, receiver);
      const p99 = percentile(h, 99);
      say(`herald: p50 ${fmt(percentile(h, 50), 1)} ms, p99 ${fmt(p99, 1)} ms, max ${fmt(Math.max(...h), 1)} ms (${h.length} jobs)`);
      const g = await graphileTrickle(db, receiver);
      say(
        `graphile-worker (defaults): p50 ${fmt(percentile(g, 50), 1)} ms, p99 ${fmt(percentile(g, 99), 1)} ms, max ${fmt(Math.max(...g), 1)} ms (${g.length} jobs)`,
      );
      figure('trickle.p99', 'due → received p99 at 50 jobs/s (ms)', p99, 'lower', 1);
      target('due → received p99 ≤ 15 ms at 50 jobs/s', p99 <= 15, `${fmt(p99, 1)} ms`);
    }

    if (section('intake')) {
      say(`\n## Intake: ${INTAKE_CONNECTIONS} connections, ${INTAKE_SECONDS} s per run, alternating, ${RUNS} runs each`);
      const i = await intake(db, receiver);
      for (let r = 0; r < i.herald.length; r++) {
        const [h, b] = [i.herald[r], i.bare[r]];
        say(
          `  run ${r + 1}: POST /v1/posts ${fmt(h.rate)}/s (p50 ${h.p50} ms, p99 ${h.p99} ms, non-2xx ${h.non2xx}; CPU/request: server ${fmt(h.cpu)} µs, PostgreSQL ${fmt(h.pgCpu)} µs); bare INSERT … RETURNING ${fmt(b.rate)}/s (p50 ${b.p50} ms, p99 ${b.p99} ms, non-2xx ${b.non2xx}; CPU/request: server ${fmt(b.cpu)} µs, PostgreSQL ${fmt(b.pgCpu)} µs)`,
        );
      }
      const hRate = median(i.herald.map((x) => x.rate));
      const bRate = median(i.bare.map((x) => x.rate));
      say(
        `POST /v1/posts (1 target, commit then 201): ${spread(i.herald.map((x) => x.rate))} posts/s, p50 ${fmt(median(i.herald.map((x) => x.p50)))} ms, p99 ${fmt(median(i.herald.map((x) => x.p99)))} ms; ${fmt(i.rows)} posts committed`,
      );
      say(
        `bare node:http + pg pool (20) INSERT … RETURNING: ${spread(i.bare.map((x) => x.rate))} req/s, p50 ${fmt(median(i.bare.map((x) => x.p50)))} ms, p99 ${fmt(median(i.bare.map((x) => x.p99)))} ms`,
      );
      say(
        `ratio POST /v1/posts / bare baseline: ${fmt(hRate / bRate, 2)}× (per-run ${i.herald.map((x, r) => fmt(x.rate / i.bare[r].rate, 2)).join(', ')})`,
      );
      figure('intake.rate', 'POST /v1/posts per second', hRate, 'higher');
      figure('intake.ratio', 'intake / bare server', hRate / bRate, 'higher', 2);
      target('intake ≥ 0.3× the bare baseline', hRate / bRate >= 0.3, `${fmt(hRate / bRate, 2)}×`);
    }

    if (section('clients')) {
      const perRun = Math.round(20_000 * SCALE);
      say(`\n## Outbound HTTP clients: the webhook's POST, 50 in flight, ${fmt(perRun)} requests per run, alternating, ${RUNS} runs each`);
      const runs = await compareHttpClients(receiver.url, RUNS, perRun);
      const herald = median(runs[0].map((x) => x.cpuUsPerRequest));
      figure('clients.herald', "Herald's HTTP layer, client CPU per request (µs)", herald, 'lower');
      for (const c of runs) {
        const cpu = median(c.map((x) => x.cpuUsPerRequest));
        say(
          `${c[0].client}: ${spread(c.map((x) => x.perSecond))} req/s; client CPU ${spread(c.map((x) => x.cpuUsPerRequest))} µs/request (${fmt(cpu / herald, 2)}× Herald's layer)`,
        );
      }
    }

    if (section('data')) {
      say(`\n## Scale of data: the claim's scan (2,000 due over ${ACCOUNTS} accounts) as finished jobs pile up; GET /v1/dlq first page`);
      const d = await dataScaling(db);
      for (const [n, ms] of d.claims)
        say(`claim with ${fmt(n)} finished jobs: ${fmt(ms, 2)} ms (${fmt(ms / d.claims[0][1], 2)}× the empty table)`);
      say(`  plan with ${fmt(d.claims[d.claims.length - 1][0])} finished jobs:\n${d.plan}`);
      say(
        `GET /v1/dlq first page (50 newest) with ${fmt(d.dlq.dead)} dead jobs: p50 ${fmt(d.dlq.p50, 1)} ms, p99 ${fmt(d.dlq.p99, 1)} ms (200 requests, one at a time)`,
      );
      const worst = Math.max(...d.claims.map(([, ms]) => Math.abs(ms / d.claims[0][1] - 1)));
      figure('data.claim-max', 'claim with 1,000,000 finished jobs (ms)', d.claims[d.claims.length - 1][1], 'lower', 2);
      figure('data.dlq-p99', 'GET /v1/dlq first page p99 (ms)', d.dlq.p99, 'lower', 1);
      target('claim flat within ±20 % from 0 to 1,000,000 finished jobs', worst <= 0.2, `largest change ${fmt(worst * 100)} %`);
      target('GET /v1/dlq first page p99 ≤ 50 ms with 100,000 dead jobs', d.dlq.p99 <= 50, `${fmt(d.dlq.p99, 1)} ms`);
    }
    if (section('events')) {
      say(`\n## Event webhooks: ${fmt(Math.round(JOBS / 2))} posts published in a burst over ${ACCOUNTS} accounts, one worker process`);
      const without = await eventsBurst(db, receiver, false);
      const withEndpoint = await eventsBurst(db, receiver, true);
      for (const line of eventsLines(without, withEndpoint, fmt)) say(line);
      target(
        'one post.published per post, no duplicate id',
        withEndpoint.deliveries === withEndpoint.posts &&
          withEndpoint.distinctIds === withEndpoint.posts &&
          withEndpoint.receivedDistinct === withEndpoint.posts,
        `${fmt(withEndpoint.deliveries)} deliveries, ${fmt(withEndpoint.distinctIds)} distinct ids, ${fmt(withEndpoint.receivedDistinct)} received`,
      );
    }
    if (section('idle')) {
      const seconds = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
      say(
        `\n## Idle: one process (API, worker, notifications) on a fresh database, a workspace with an owner, one webhook account, digest and alerts on, nothing scheduled; ${fmt(seconds)} s after a 10 s warm-up`,
      );
      const idle = await idleFigures(
        {
          create: () => db.create(),
          drop: (name) => db.drop(name),
          admin: (work) => db.admin(work),
          startHerald,
          stopChild,
          bootstrapKey: KEY,
        },
        seconds,
      );
      for (const line of idleLines(idle, fmt)) say(line);
      figure('idle.cpu', 'idle CPU (% of a core)', idle.cpuPercent, 'lower', 2);
      figure('idle.tx', 'idle database transactions a minute', idle.transactionsPerMinute, 'lower', 1);
      figure('idle.rss', 'idle RSS (MB)', idle.rssMb, 'lower');
      target('idle CPU ≤ 0.3 % of a core', idle.cpuPercent <= 0.3, `${fmt(idle.cpuPercent, 2)} %`);
      target(
        'idle database transactions ≤ 20 a minute',
        idle.transactionsPerMinute <= 20,
        `${fmt(idle.transactionsPerMinute, 1)} a minute`,
      );
    }
    if (section('parsers')) {
      say('\n## Parsers of hostile input: pages built to slow a parser, a secret echoed in a large answer (in-process, medians of RUNS)');
      const figures = hostileInputFigures(RUNS);
      for (const f of figures) say(`${f.what}: ${fmt(f.ms, 1)} ms (worst ${fmt(f.maxMs, 1)} ms)`);
      const worst = Math.max(...figures.map((f) => f.ms));
      figure('parsers.slowest', 'slowest hostile-input parse (ms)', worst, 'lower', 1);
      target(
        'hostile input parsed in linear time (median ≤ 100 ms per 2 MB page or 64 KB body)',
        worst <= 100,
        `slowest ${fmt(worst, 1)} ms`,
      );
    }
  } finally {
    await stopChild(receiver.child);
    if (stopEmbedded) await stopEmbedded();
  }
  const baselineFile = process.env.BENCH_BASELINE ?? path.join(ROOT, 'bench/results/baseline.json');
  if (fs.existsSync(baselineFile)) {
    const noise = Number(process.env.BENCH_NOISE ?? 0.25);
    const base = JSON.parse(fs.readFileSync(baselineFile, 'utf8')) as { at: string; figures: Figure[] };
    const cmp = compareFigures(recorded, base.figures, noise);
    say(`\n## Against the baseline (${path.relative(ROOT, baselineFile)}, run of ${base.at}; noise ±${fmt(noise * 100)} %)`);
    for (const c of cmp) {
      const digits = recorded.find((f) => f.key === c.key)?.digits ?? 0;
      say(
        `${c.regressed ? 'WORSE ' : c.improved ? 'better' : 'same  '} ${c.what}: ${fmt(c.before, digits)} → ${fmt(c.after, digits)} (${fmt(c.ratio, 2)}×)`,
      );
    }
    const worse = cmp.filter((c) => c.regressed);
    if (cmp.length > 0)
      target(
        `no regression beyond the noise (±${fmt(noise * 100)} %) against the baseline`,
        worse.length === 0,
        worse.length === 0 ? `${cmp.length} figures compared` : worse.map((c) => c.what).join('; '),
      );
  }
  say('\n## Targets');
  for (const v of verdict) say(v);
  say(`\nload average at end: ${loadavg()}; took ${fmt((Date.now() - began) / 60_000, 1)} min`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
