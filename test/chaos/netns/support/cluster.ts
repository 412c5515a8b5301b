import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../../../../src/database/data-source';
import { withClient } from '../../../support/database';
import { freePort } from '../../../support/net';
import { ServiceProcess } from '../../../support/process';
import { ReceivedRequest, Receiver, ReceiverHandler, startReceiver } from '../../../support/receiver';
import { api } from '../../../support/service';
import { Host, PrivatePostgres, Topology } from './hosts';

export const KEY = 'netns-chaos-test-key-000000000001';
/** Every Herald process listens on this port inside its own namespace. */
const HERALD_PORT = 3000;

/**
 * The several-hosts harness: a topology of namespaces, a private PostgreSQL on the bridge, one
 * migrated database, Herald processes (one per host, `node dist/src/main.js` inside the namespace)
 * and receivers on the bridge address. close() removes all of it, whatever state a failed test
 * left it in.
 */
export class Cluster {
  readonly services = new Map<number, ServiceProcess>();
  private readonly receivers: Receiver[] = [];
  private readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-netns-data-'));

  private constructor(
    readonly topology: Topology,
    readonly pg: PrivatePostgres,
    readonly databaseUrl: string,
  ) {}

  static async create(hosts: number): Promise<Cluster> {
    const topology = await Topology.create(hosts);
    let pg: PrivatePostgres | null = null;
    try {
      pg = await PrivatePostgres.start(topology.databaseAddress, await freePort(), topology.subnet);
      const admin = new Client({ connectionString: pg.url() });
      await admin.connect();
      await admin.query('CREATE DATABASE herald');
      await admin.end();
      const databaseUrl = pg.url('herald');
      const ds = await new DataSource(dataSourceOptions(databaseUrl, 2)).initialize();
      try {
        await runMigrations(ds);
      } finally {
        await ds.destroy();
      }
      return new Cluster(topology, pg, databaseUrl);
    } catch (err) {
      await pg?.stop();
      await topology.destroy();
      throw err;
    }
  }

  host(index: number): Host {
    return this.topology.host(index);
  }

  service(index: number): ServiceProcess {
    const s = this.services.get(index);
    if (!s) throw new Error(`no service on host ${index}`);
    return s;
  }

  /** Starts Herald on host `index` and waits until it is ready. */
  async start(index: number, env: Record<string, string>): Promise<ServiceProcess> {
    const host = this.host(index);
    const service = ServiceProcess.start(
      {
        DATABASE_URL: this.databaseUrl,
        DATABASE_POOL_SIZE: '10',
        HERALD_API_KEY: KEY,
        HERALD_SECRET_KEY: 'cd'.repeat(32),
        // The receivers live on 10.231.N.1: a private address, refused unless allowed.
        HERALD_ALLOW_PRIVATE_URLS: 'true',
        HERALD_DATA_DIR: path.join(this.dataDir, `h${index}`),
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
        NOTIFICATIONS_ENABLED: 'false',
        ...env,
      },
      HERALD_PORT,
      { netns: host.netns, host: host.address },
    );
    this.services.set(index, service);
    await service.waitReady(60_000);
    return service;
  }

  async receiver(handler?: ReceiverHandler): Promise<Receiver> {
    const r = await startReceiver(handler, { host: this.topology.receiverAddress });
    this.receivers.push(r);
    return r;
  }

  /** The index of the host a request came from, or 0 when it is none of them. */
  sender(request: ReceivedRequest): number {
    return this.topology.hosts.find((h) => request.remoteAddress.endsWith(h.address))?.index ?? 0;
  }

  /** Webhook accounts, one per path `/hook/<n>` of `receiver`. */
  async accounts(via: ServiceProcess, receiver: Receiver, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await api<{ id: string }>(via, KEY, 'POST', '/v1/accounts', {
        provider: 'webhook',
        name: `blog ${i}`,
        config: { url: receiver.urlFor(`/hook/${i}`) },
      });
      if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
      ids.push(res.body.id);
    }
    return ids;
  }

  /** `posts` posts, each to every account (20 targets per post at most). */
  async queue(via: ServiceProcess, accountIds: string[], posts: number, label = 'post'): Promise<void> {
    for (let i = 0; i < posts; i++) {
      for (let from = 0; from < accountIds.length; from += 20) {
        const targets = accountIds.slice(from, from + 20).map((accountId) => ({ accountId }));
        const res = await api(via, KEY, 'POST', '/v1/posts', { text: `${label} ${i}`, targets });
        if (res.status !== 201) throw new Error(`post failed: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
  }

  sql<T extends object>(text: string, values: unknown[] = []): Promise<T[]> {
    return withClient(this.databaseUrl, async (db) => (await db.query<T>(text, values)).rows);
  }

  async jobStates(): Promise<Record<string, number>> {
    const rows = await this.sql<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  /** The worker name (attempts.worker, jobs.lease_owner) of a process: `host:pid:random`. */
  ownerPattern(service: ServiceProcess): string {
    return `%:${service.child.pid}:%`;
  }

  async close(): Promise<void> {
    await Promise.all([...this.services.values()].map((s) => s.stop('SIGKILL')));
    this.services.clear();
    await Promise.all(this.receivers.splice(0).map((r) => r.close()));
    await this.pg.stop();
    await this.topology.destroy();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * Drop and duplicate figures of a run: every job's key must have reached the receiver; a request
 * for a job carries that job's own idempotency key (data.jobId in the body says which job).
 */
export async function deliveryFigures(
  cluster: Cluster,
  requests: ReceivedRequest[],
): Promise<{ jobs: number; requests: number; duplicates: number; dropped: string[]; wrongKey: number }> {
  const jobs = await cluster.sql<{ id: string; key: string }>(`SELECT id, idempotency_key AS key FROM jobs`);
  const keyOf = new Map(jobs.map((j) => [j.id, j.key]));
  const seen = new Set<string>();
  let wrongKey = 0;
  for (const r of requests) {
    const key = String(r.headers['idempotency-key']);
    const body = JSON.parse(r.body) as { id: string; data: { jobId: string } };
    if (keyOf.get(body.data.jobId) !== key || body.id !== key) wrongKey += 1;
    seen.add(key);
  }
  const dropped = jobs.filter((j) => !seen.has(j.key)).map((j) => j.id);
  return { jobs: jobs.length, requests: requests.length, duplicates: requests.length - seen.size, dropped, wrongKey };
}
