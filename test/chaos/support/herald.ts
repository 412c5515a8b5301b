import * as fs from 'node:fs';
import { withClient } from '../../support/database';
import { freePort } from '../../support/net';
import { ServiceProcess } from '../../support/process';
import type { ReceivedRequest } from '../../support/receiver';
import { api } from '../../support/service';

/** The bootstrap API key of every Herald process the fault suite starts. */
export const CHAOS_KEY = 'chaos-suite-api-key-0000000000001';

/** Settings that make leases, retries and polling fast enough for a test that waits on them. */
export function heraldEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    HERALD_API_KEY: CHAOS_KEY,
    HERALD_SECRET_KEY: 'ce'.repeat(32),
    HERALD_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'warn',
    WORKER_POLL_INTERVAL_MS: '200',
    // An idle worker sweeps every 2 s: a lease taken by a process after the others last looked
    // is found within a lease and 2 s of a crash, inside the tests' time budgets.
    WORKER_SWEEP_INTERVAL_MS: '2000',
    WORKER_LEASE_MS: '4000',
    HTTP_TOTAL_TIMEOUT_MS: '3000',
    RETRY_BASE_DELAY_MS: '100',
    RETRY_MAX_DELAY_MS: '1000',
    RETRY_MAX_ATTEMPTS: '1000',
    NOTIFICATIONS_ENABLED: 'false',
    ...extra,
  };
}

/** The Herald processes of a test: each one is killed at the end, a stopped one resumed first. */
export class Fleet {
  readonly all: ServiceProcess[] = [];

  async start(databaseUrl: string, extra: Record<string, string> = {}, ready = true): Promise<ServiceProcess> {
    const service = ServiceProcess.start(heraldEnv(databaseUrl, extra), await freePort());
    this.all.push(service);
    if (ready) await service.waitReady(60_000);
    return service;
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      this.all.splice(0).map((s) => {
        if (s.running) s.child.kill('SIGCONT');
        return s.stop('SIGKILL');
      }),
    );
  }
}

/** `n` webhook accounts, through the API, spread over `urls` in turn. */
export async function webhookAccounts(service: ServiceProcess, urls: string[], n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await api<{ id: string }>(service, CHAOS_KEY, 'POST', '/v1/accounts', {
      provider: 'webhook',
      name: `chaos ${i}`,
      config: { url: urls[i % urls.length] },
    });
    if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push(res.body.id);
  }
  return ids;
}

/** One POST /v1/posts; the job ids when it answered 201, else the status (or 0: no answer). */
export async function post(
  service: ServiceProcess,
  targets: string[],
  text: string,
  timeoutMs = 15_000,
): Promise<{ status: number; jobIds: string[] }> {
  try {
    const res = await fetch(`${service.url}/v1/posts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CHAOS_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text, targets: targets.map((accountId) => ({ accountId })) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await res.json()) as { jobs?: { id: string }[] };
    return { status: res.status, jobIds: res.status === 201 ? (body.jobs ?? []).map((j) => j.id) : [] };
  } catch {
    return { status: 0, jobIds: [] };
  }
}

/** `posts` posts, one target each, accounts in turn, `parallel` requests at a time; every one must be accepted. */
export async function postMany(service: ServiceProcess, accountIds: string[], posts: number, parallel = 8): Promise<string[]> {
  const jobIds: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < posts) {
      const i = next++;
      const res = await post(service, [accountIds[i % accountIds.length]], `chaos post ${i}`);
      if (res.status !== 201) throw new Error(`POST /v1/posts answered ${res.status}`);
      jobIds.push(...res.jobIds);
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return jobIds;
}

export const jobStates = (url: string): Promise<Record<string, number>> =>
  withClient(url, async (db) => {
    const { rows } = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  });

export interface DeliveryReport {
  jobs: number;
  requests: number;
  /** Jobs whose idempotency key never reached a receiver. */
  dropped: string[];
  /** Requests beyond the first per key. */
  duplicates: number;
  /** Requests whose webhook-id and Idempotency-Key differ, or name no job of the database. */
  foreign: number;
}

/**
 * Every job's key against what the receivers got. A webhook's `webhook-id` and `Idempotency-Key`
 * are the job's idempotency key: a duplicate carries the key of the original.
 */
export async function deliveryReport(databaseUrl: string, requests: ReceivedRequest[]): Promise<DeliveryReport> {
  const keys = await withClient(databaseUrl, async (db) =>
    (await db.query<{ key: string }>(`SELECT idempotency_key AS key FROM jobs`)).rows.map((r) => r.key),
  );
  const known = new Set(keys);
  const seen = new Set<string>();
  let foreign = 0;
  for (const r of requests) {
    const id = String(r.headers['webhook-id']);
    if (id !== String(r.headers['idempotency-key']) || !known.has(id)) foreign += 1;
    seen.add(id);
  }
  return {
    jobs: keys.length,
    requests: requests.length,
    dropped: keys.filter((k) => !seen.has(k)),
    duplicates: requests.length - seen.size,
    foreign,
  };
}

/** The local TCP ports of a process's sockets (from /proc: it works on a stopped process too). */
export function tcpPortsOf(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      /* closed meanwhile */
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(table)) continue;
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9])) ports.push(parseInt(f[1].split(':')[1], 16));
    }
  }
  return ports;
}

/** The PostgreSQL sessions a process holds on the server of `adminUrl` (matched by client port). */
export async function sessionsOf(adminUrl: string, pid: number): Promise<{ pid: number; state: string | null; application: string }[]> {
  const ports = tcpPortsOf(pid);
  if (ports.length === 0) return [];
  return withClient(
    adminUrl,
    async (db) =>
      (
        await db.query<{ pid: number; state: string | null; application: string }>(
          `SELECT pid, state, application_name AS application FROM pg_stat_activity WHERE client_addr IS NOT NULL AND client_port = ANY($1::int[])`,
          [ports],
        )
      ).rows,
  );
}
