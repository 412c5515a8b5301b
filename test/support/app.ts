import { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import type { Server } from 'node:http';
import request from 'supertest';
import { createApp } from '../../src/app';
import type { HeraldConfig } from '../../src/config/config';
import { bearer, testConfig } from './config';
import { createTestDatabase } from './database';
import { ENV_RUN_ID, requireEnv, runDocumentFile } from './env';
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
  const contract = new OpenApiContract((await runDocument(server)) as ConstructorParameters<typeof OpenApiContract>[0]);
  return { http: () => checkedAgent(request(server), contract), contract };
}

/**
 * The OpenAPI document, as the first app of this test run served it at /docs-json, kept in a file
 * for the run's other files. Every app of a run is built from the same code and the same modules
 * (only the document's `servers` entry follows PUBLIC_URL, which the checks do not read), so each
 * file's app would serve the same document; building it costs an app ~0.4 s of CPU. The tests of
 * the document itself (openapi, roles, operations) still ask their own app for it.
 */
async function runDocument(server: Server): Promise<unknown> {
  const file = runDocumentFile(requireEnv(ENV_RUN_ID));
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const document = (await request(server).get('/docs-json').expect(200)).body as unknown;
  // Written whole under another name, then renamed: a file read at the same moment sees all or nothing.
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await fs.writeFile(partial, JSON.stringify(document));
  await fs.rename(partial, file);
  return document;
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
