import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import type { Client } from 'pg';

/**
 * The `idle` section of `npm run bench` (issue 32, "Idle"): what Herald costs when there is
 * nothing to do. One process (API, worker and notifications, as `npm start` runs it) on a fresh
 * database, set up through the API as a person would: a workspace with an owner, one webhook
 * account, the daily digest on (to the owner) and alerts on; nothing scheduled. After a warm-up
 * it is left alone for BENCH_IDLE_SECONDS (60) and measured:
 * - its CPU, utime + stime of /proc/<pid>/stat (every thread of it), as % of one core;
 * - its main thread's voluntary context switches per second (how often it woke up);
 * - its RSS (VmRSS) at the end;
 * - the transactions of its database per minute, xact_commit + xact_rollback of
 *   pg_stat_database, read over a connection to another database so the reading does not count.
 *   A backend reports its counts when it goes idle, at most a second after a transaction and at
 *   the latest 10 s after (PostgreSQL's PGSTAT_MIN_INTERVAL / PGSTAT_IDLE_INTERVAL): both
 *   readings lag alike, so over a minute of steady idling their difference is the minute's,
 *   within the few transactions on its edges.
 */
export interface IdleFigures {
  seconds: number;
  cpuPercent: number;
  wakeupsPerSecond: number;
  rssMb: number;
  transactionsPerMinute: number;
}

export interface IdleBench {
  /** A fresh database: its name (for pg_stat_database) and URL. */
  create(): Promise<{ name: string; url: string }>;
  drop(name: string): Promise<void>;
  /** Runs `work` on a connection to the server's maintenance database (not Herald's). */
  admin<T>(work: (c: Client) => Promise<T>): Promise<T>;
  /** Starts Herald as run.ts's startHerald does. */
  startHerald(databaseUrl: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }>;
  stopChild(child: ChildProcess): Promise<void>;
  /** The bootstrap API key startHerald gives Herald (HERALD_API_KEY). */
  bootstrapKey: string;
}

const WARM_UP_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function idleFigures(bench: IdleBench, seconds = Number(process.env.BENCH_IDLE_SECONDS ?? 60)): Promise<IdleFigures> {
  const { name, url } = await bench.create();
  try {
    const herald = await bench.startHerald(url, {});
    try {
      await setUp(herald.url, bench.bootstrapKey);
      await sleep(WARM_UP_MS);
      const pid = herald.child.pid;
      if (pid === undefined) throw new Error('bench: Herald has no pid');
      const transactions = () =>
        bench.admin(async (c) => {
          const rows = await c.query<{ n: string }>(
            'SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = $1',
            [name],
          );
          return Number(rows.rows[0].n);
        });
      const tx0 = await transactions();
      const cpu0 = cpuTicks(pid);
      const switches0 = wakeups(pid);
      const t0 = process.hrtime.bigint();
      await sleep(seconds * 1000);
      const cpu1 = cpuTicks(pid);
      const switches1 = wakeups(pid);
      const elapsedS = Number(process.hrtime.bigint() - t0) / 1e9;
      const tx1 = await transactions();
      return {
        seconds: elapsedS,
        cpuPercent: ((cpu1 - cpu0) / clockTicks() / elapsedS) * 100,
        wakeupsPerSecond: (switches1 - switches0) / elapsedS,
        rssMb: rssKb(pid) / 1024,
        transactionsPerMinute: ((tx1 - tx0) / elapsedS) * 60,
      };
    } finally {
      await bench.stopChild(herald.child);
    }
  } finally {
    await bench.drop(name);
  }
}

/** The section's lines, as `say` prints them. */
export function idleLines(f: IdleFigures, fmt: (n: number, digits?: number) => string): string[] {
  return [
    `over ${fmt(f.seconds)} s, nothing scheduled, digest and alerts on: CPU ${fmt(f.cpuPercent, 2)} % of a core; ` +
      `main thread woken ${fmt(f.wakeupsPerSecond, 1)} times/s; RSS ${fmt(f.rssMb)} MB; ` +
      `${fmt(f.transactionsPerMinute, 1)} database transactions a minute`,
  ];
}

/** A workspace with an owner, a webhook account, the digest (to the owner) and alerts on: through the API. */
async function setUp(base: string, bootstrapKey: string): Promise<void> {
  const created = await call<{ workspace: { id: string }; apiKey: { key: string } }>(base, bootstrapKey, 'POST', '/v1/workspaces', {
    name: 'idle bench',
  });
  const key = created.apiKey.key;
  const email = 'owner@idle-bench.example';
  await call(base, key, 'POST', '/v1/people', { email, name: 'Idle Owner', password: 'idle-bench-password-0001' });
  await call(base, key, 'POST', '/v1/accounts', { provider: 'webhook', name: 'idle webhook', config: { url: 'http://127.0.0.1:9/hook' } });
  await call(base, key, 'PUT', '/v1/settings/notifications', {
    digest: { enabled: true, recipients: [email], hour: 9, timezone: 'UTC' },
    alerts: { enabled: true },
  });
}

async function call<T>(base: string, key: string, method: string, p: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`bench idle: ${method} ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** utime + stime of the process (every thread), in clock ticks: fields 14 and 15 of /proc/<pid>/stat. */
function cpuTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Voluntary context switches of the main thread: each is a sleep, so each wake-up counts one. */
function wakeups(pid: number): number {
  const m = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

function rssKb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

let ticks: number | null = null;
function clockTicks(): number {
  if (ticks === null) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}
