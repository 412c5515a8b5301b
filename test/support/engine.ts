import { Webhook } from 'standardwebhooks';
import type { HeraldConfig } from '../../src/config/config';
import { bearer, bootTestApp, TestApp } from './app';
import type { ReceivedRequest } from './receiver';

/** Worker settings that make retries and polling fast enough for tests. */
export function fastEngine(overrides: Partial<HeraldConfig> = {}): Partial<HeraldConfig> {
  const base = bootDefaults();
  return {
    allowPrivateUrls: true,
    worker: { ...base.worker, enabled: true, pollIntervalMs: 100, leaseMs: 10_000, shutdownGraceMs: 2_000 },
    retry: { baseDelayMs: 20, maxDelayMs: 200, maxAttempts: 16, maxServerDelayMs: 86_400_000, jitter: 'full' },
    circuit: { failureThreshold: 5, cooldownMs: 30_000, disableThreshold: 50 },
    http: { connectTimeoutMs: 1_000, totalTimeoutMs: 3_000, responseExcerptBytes: 2048 },
    ...overrides,
  };
}

function bootDefaults(): HeraldConfig {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { testConfig } = require('./app') as typeof import('./app');
  return testConfig('postgres://unused');
}

export async function bootEngine(overrides: Partial<HeraldConfig> = {}, databaseUrl?: string): Promise<TestApp> {
  return bootTestApp({ databaseUrl, config: fastEngine(overrides) });
}

export interface WebhookAccount {
  id: string;
  secret: string;
}

/** A webhook account pointing at `url`, via the API; its signing secret is returned once. */
export async function createWebhookAccount(
  t: TestApp,
  key: string,
  url: string,
  extra: Record<string, unknown> = {},
): Promise<WebhookAccount> {
  const res = await t
    .http()
    .post('/v1/accounts')
    .set(bearer(key))
    .send({ provider: 'webhook', name: 'Blog', config: { url }, ...extra });
  if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, secret: res.body.secret };
}

export async function createPost(t: TestApp, key: string, body: Record<string, unknown>): Promise<{ id: string; jobs: { id: string }[] }> {
  const res = await t.http().post('/v1/posts').set(bearer(key)).send(body);
  if (res.status !== 201) throw new Error(`post creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Polls GET /v1/jobs/:id until `done(job)` holds. */
export async function waitForJob<T extends { status: string; attempts: unknown[] }>(
  t: TestApp,
  key: string,
  jobId: string,
  done: (job: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | null = null;
  while (Date.now() < deadline) {
    const res = await t.http().get(`/v1/jobs/${jobId}`).set(bearer(key));
    last = res.body as T;
    if (res.status === 200 && done(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${jobId} did not reach the expected state; last: ${JSON.stringify(last)}`);
}

/** Verifies a received webhook with the reference `standardwebhooks` library. */
export function verifySignature(secret: string, request: ReceivedRequest): unknown {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers)) if (typeof v === 'string') headers[k] = v;
  return new Webhook(secret).verify(request.body, headers);
}
