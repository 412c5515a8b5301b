import { createHash, randomBytes } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import { HeraldConfig, loadConfig } from '../../src/config/config';

/**
 * What a test's Herald is given, with nothing of the application loaded: the config of a test app
 * (end-to-end or medium), the worker settings of the engine's tests, and the API key's header.
 * Kept apart from ./app.ts, which loads the whole application (src/app), so a medium test
 * (./medium.ts) loads only the modules it boots.
 */

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
    // Notifications as in production: a mail written to the outbox wakes the sender through its
    // NOTIFY (LISTEN herald_notifications), so a test that waits for a mail waits for the mail. The
    // 2 s poll runs only while that connection is down.
    // /metrics is off without a token; tests scrape with this one, and read the database at every scrape.
    metrics: { token: `test-metrics-${randomBytes(12).toString('hex')}`, databaseRefreshMs: 0 },
    ...overrides,
  };
}

/**
 * Worker settings that make retries and polling fast enough for tests. The request timeout is
 * not shortened (20 s, as in production): on a machine loaded by other test runs a loopback
 * answer has taken more than 3 s, and a test not about timeouts then met transient failures it
 * did not expect. Tests of the timeouts set their own.
 */
export function fastEngine(overrides: Partial<HeraldConfig> = {}): Partial<HeraldConfig> {
  const base = testConfig('postgres://unused');
  return {
    allowPrivateUrls: true,
    // The safety sweep as often as the poll: tests that write jobs without a NOTIFY do not wait a
    // minute for it. Tests of the idle design (engine-idle.test.ts) set their own.
    worker: { ...base.worker, enabled: true, pollIntervalMs: 100, sweepIntervalMs: 100, leaseMs: 10_000, shutdownGraceMs: 2_000 },
    retry: { baseDelayMs: 20, maxDelayMs: 200, maxAttempts: 16, maxServerDelayMs: 86_400_000, jitter: 'full' },
    circuit: { failureThreshold: 5, cooldownMs: 30_000, disableThreshold: 50 },
    http: { connectTimeoutMs: 5_000, totalTimeoutMs: 20_000, responseExcerptBytes: 2048 },
    ...overrides,
  };
}

/** A circuit breaker pushed out of the way, for tests about something else that fail many attempts in a row. */
export const NO_BREAKER: HeraldConfig['circuit'] = { failureThreshold: 1000, cooldownMs: 30_000, disableThreshold: 1000 };

/** The Authorization header of an API key. */
export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
