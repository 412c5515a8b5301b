import { INestApplication } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import request from 'supertest';
import { createApp } from '../../src/app';
import { HeraldConfig, loadConfig } from '../../src/config/config';
import { createTestDatabase } from './database';
import { checkedTest, OpenApiContract } from './openapi';

export interface TestApp {
  app: INestApplication;
  /** supertest bound to the app's HTTP server; every answer is checked against the OpenAPI document */
  http: () => ReturnType<typeof request>;
  /** the app's own OpenAPI document (/docs-json), as the checks read it */
  contract: OpenApiContract;
  config: HeraldConfig;
  databaseUrl: string;
  /** the bootstrap (admin) API key of this app's database */
  adminKey: string;
  close(): Promise<void>;
}

/** A resolved config for tests: a fresh database, a random credentials key, quiet logs. */
export function testConfig(databaseUrl: string, overrides: Partial<HeraldConfig> = {}): HeraldConfig {
  const env = loadConfig({ LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', PORT: '0' });
  return {
    ...env,
    dataDir: path.join(os.tmpdir(), `herald-test-data-${randomBytes(4).toString('hex')}`),
    databaseUrl,
    databasePoolSize: 10,
    embedded: false,
    secretKey: randomBytes(32),
    // One per database, like hosts sharing a database share HERALD_API_KEY: a second app on the
    // same database with another key would replace the first one's (a changed bootstrap key does).
    bootstrapApiKey: `test-bootstrap-${createHash('sha256').update(databaseUrl).digest('hex').slice(0, 32)}`,
    worker: { ...env.worker, enabled: false },
    // Mail goes out on the notification poll: every 100 ms here instead of 2 s, so a test (or a
    // fixture) that waits for a mail waits for the mail, not for the poll.
    notifications: { ...env.notifications, pollIntervalMs: 100 },
    // /metrics is off without a token; tests scrape with this one, and read the database at every scrape.
    metrics: { token: `test-metrics-${randomBytes(12).toString('hex')}`, databaseRefreshMs: 0 },
    ...overrides,
  };
}

/** Boots the real Nest application on a fresh database (or the one given). */
export async function bootTestApp(options: { databaseUrl?: string; config?: Partial<HeraldConfig> } = {}): Promise<TestApp> {
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase()).url;
  const config = testConfig(databaseUrl, options.config);
  const app = await createApp(config, { print: () => undefined });
  await app.listen(0, '127.0.0.1');
  return {
    app,
    ...(await checkedHttp(app)),
    config,
    databaseUrl,
    adminKey: config.bootstrapApiKey ?? '',
    close: () => app.close(),
  };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** GET /metrics with the app's METRICS_TOKEN; the Prometheus text. */
export async function scrapeMetrics(t: TestApp): Promise<string> {
  const res = await t
    .http()
    .get('/metrics')
    .set(bearer(t.config.metrics.token ?? ''));
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.text;
}

/**
 * supertest on a listening app, every answer checked against the OpenAPI document the app
 * serves. Any helper that boots an app its own way uses this for its `http()`.
 */
export async function checkedHttp(app: INestApplication): Promise<Pick<TestApp, 'http' | 'contract'>> {
  const server = app.getHttpServer() as Server;
  const contract = new OpenApiContract(
    (await request(server).get('/docs-json').expect(200)).body as ConstructorParameters<typeof OpenApiContract>[0],
  );
  return { http: () => checkedAgent(request(server), contract), contract };
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'del', 'head', 'options'];

/** supertest's agent whose requests check their answers against the contract (see ./openapi.ts). */
function checkedAgent(agent: ReturnType<typeof request>, contract: OpenApiContract): ReturnType<typeof request> {
  return new Proxy(agent, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || !HTTP_METHODS.includes(prop) || typeof value !== 'function') return value;
      const method = prop === 'del' ? 'delete' : prop;
      return (url: string) => checkedTest((value as (url: string) => request.Test).call(target, url), method, contract);
    },
  });
}
