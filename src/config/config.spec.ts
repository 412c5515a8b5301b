import { ConfigError, loadConfig } from './config';
import { NEWEST_LINKEDIN_VERSION } from './linkedin-versions';

const configError = (env: Record<string, string>): ConfigError => {
  try {
    loadConfig(env, '/srv/herald');
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('gives working defaults for an empty environment', () => {
    const c = loadConfig({}, '/srv/herald');
    expect(c.port).toBe(3000);
    expect(c.databaseUrl).toBeNull();
    expect(c.dataDir).toBe('/srv/herald/.data');
    expect(c.publicUrl).toBe('http://localhost:3000');
    expect(c.allowPrivateUrls).toBe(false);
    expect(c.retry).toEqual({ baseDelayMs: 2000, maxDelayMs: 3_600_000, maxAttempts: 16, maxServerDelayMs: 86_400_000, jitter: 'full' });
    expect(c.circuit).toEqual({ failureThreshold: 5, cooldownMs: 30_000, disableThreshold: 50 });
    expect(c.worker.maxInFlightPerAccount).toBe(5);
    expect(c.worker.leaseMs).toBe(60_000);
    expect(c.worker.attemptTimeoutMs).toBe(60_000);
  });

  it("an attempt budget defaults to at least one request's total timeout", () => {
    expect(loadConfig({ HTTP_TOTAL_TIMEOUT_MS: '90000' }).worker.attemptTimeoutMs).toBe(90_000);
    expect(loadConfig({ WORKER_ATTEMPT_TIMEOUT_MS: '120000', WORKER_LEASE_MS: '5000' }).worker.attemptTimeoutMs).toBe(120_000);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ PORT: '80.5' }, 'PORT'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://root@localhost/db' }, 'DATABASE_URL'],
    [{ HERALD_SECRET_KEY: 'short' }, 'HERALD_SECRET_KEY'],
    [{ HERALD_API_KEY: 'tooshort' }, 'HERALD_API_KEY'],
    [{ HERALD_ALLOW_PRIVATE_URLS: 'maybe' }, 'HERALD_ALLOW_PRIVATE_URLS'],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'proxy.example.com' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '11' }, 'TRUST_PROXY'],
    [{ SMTP_URL: 'http://mail' }, 'SMTP_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT'],
    [{ RETRY_BASE_DELAY_MS: '5000', RETRY_MAX_DELAY_MS: '1000' }, 'RETRY_MAX_DELAY_MS'],
    [{ WORKER_LEASE_MS: '500' }, 'WORKER_LEASE_MS'],
    [{ WORKER_ATTEMPT_TIMEOUT_MS: '10000' }, 'WORKER_ATTEMPT_TIMEOUT_MS'], // shorter than one request's 20 s total timeout
  ])('rejects %j naming %s', (env, variable) => {
    const err = configError(env);
    expect(err.variable).toBe(variable);
    expect(err.message).toContain(variable);
  });

  it('never echoes a database URL that may hold a password', () => {
    const err = configError({ DATABASE_URL: 'postgres//user:hunter2@db' });
    expect(err.message).not.toContain('hunter2');
  });

  it('accepts a 32-byte secret key in hex or base64', () => {
    const hex = 'ab'.repeat(32);
    expect(loadConfig({ HERALD_SECRET_KEY: hex }).secretKey?.toString('hex')).toBe(hex);
    const b64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ HERALD_SECRET_KEY: b64 }).secretKey).toEqual(Buffer.alloc(32, 7));
  });

  it('reads TRUST_PROXY: off by default, a hop count, or named proxies', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: 'Loopback, 10.0.0.0/8,fd00::/8' }).trustProxy).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8']);
  });

  it('reads booleans and trims the public URL', () => {
    const c = loadConfig({ HERALD_ALLOW_PRIVATE_URLS: 'TRUE', PUBLIC_URL: 'https://herald.example.com/' });
    expect(c.allowPrivateUrls).toBe(true);
    expect(c.publicUrl).toBe('https://herald.example.com');
  });

  it('reads the LinkedIn API version (YYYYMM, default current) and the media link lifetime', () => {
    const c = loadConfig({});
    expect(c.linkedin).toMatchObject({
      apiVersion: NEWEST_LINKEDIN_VERSION,
      apiBaseUrl: 'https://api.linkedin.com',
      oauthBaseUrl: 'https://www.linkedin.com',
    });
    expect(c.media.urlTtlSeconds).toBe(604_800);
    expect(loadConfig({ LINKEDIN_VERSION: '202601' }).linkedin.apiVersion).toBe('202601');
    expect(configError({ LINKEDIN_VERSION: '2026-01' }).message).toBe(
      `Invalid configuration: LINKEDIN_VERSION must be a LinkedIn API version as YYYYMM (e.g. ${NEWEST_LINKEDIN_VERSION}), got "2026-01"`,
    );
    expect(configError({ LINKEDIN_VERSION: '202613' }).variable).toBe('LINKEDIN_VERSION');
    expect(configError({ MEDIA_URL_TTL_SECONDS: '5' }).variable).toBe('MEDIA_URL_TTL_SECONDS');
  });
});

describe('loadConfig: metrics and media quota', () => {
  it('turns /metrics off without METRICS_TOKEN and reuses database gauges for 30 s by default', () => {
    const c = loadConfig({}, '/srv/herald');
    expect(c.metrics).toEqual({ token: null, databaseRefreshMs: 30_000 });
    expect(c.media).toMatchObject({ quotaBytes: 1024 ** 3, quotaCount: 10_000 });
  });

  it('reads the metrics token, the refresh interval and the media quota', () => {
    const c = loadConfig(
      { METRICS_TOKEN: 'scrape-token-0123456789', METRICS_DB_REFRESH_SECONDS: '0', MEDIA_QUOTA_BYTES: '10485760', MEDIA_QUOTA_COUNT: '3' },
      '/srv/herald',
    );
    expect(c.metrics).toEqual({ token: 'scrape-token-0123456789', databaseRefreshMs: 0 });
    expect(c.media).toMatchObject({ quotaBytes: 10_485_760, quotaCount: 3 });
  });

  it.each([
    [{ METRICS_TOKEN: 'short-token' }, 'METRICS_TOKEN'],
    [{ METRICS_TOKEN: 'has a space in the token' }, 'METRICS_TOKEN'],
    [{ METRICS_DB_REFRESH_SECONDS: '-1' }, 'METRICS_DB_REFRESH_SECONDS'],
    [{ MEDIA_QUOTA_BYTES: '1000' }, 'MEDIA_QUOTA_BYTES'], // below one 5 MB image
    [{ MEDIA_QUOTA_COUNT: '0' }, 'MEDIA_QUOTA_COUNT'],
  ])('rejects %j naming %s', (env, variable) => {
    const err = configError(env);
    expect(err.variable).toBe(variable);
  });

  it('never echoes a refused metrics token', () => {
    expect(configError({ METRICS_TOKEN: 'leaky value' }).message).not.toContain('leaky');
  });

  it('reads the pooler settings and the retry jitter', () => {
    const d = loadConfig({});
    expect(d.databaseDirectUrl).toBeNull();
    expect(d.databasePreparedStatements).toBe(true);
    expect(d.databaseIdleInTransactionTimeoutMs).toBe(10_000);
    const c = loadConfig({
      DATABASE_URL: 'postgres://h@pooler:6432/herald',
      DATABASE_DIRECT_URL: 'postgres://h@db:5432/herald',
      DATABASE_PREPARED_STATEMENTS: 'false',
      DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0',
      RETRY_JITTER: 'none',
    });
    expect(c.databaseDirectUrl).toBe('postgres://h@db:5432/herald');
    expect(c.databasePreparedStatements).toBe(false);
    expect(c.databaseIdleInTransactionTimeoutMs).toBe(0);
    expect(c.retry.jitter).toBe('none');
    expect(configError({ RETRY_JITTER: 'half' }).variable).toBe('RETRY_JITTER');
    expect(configError({ DATABASE_DIRECT_URL: 'postgres://h@db/herald' }).variable).toBe('DATABASE_DIRECT_URL');
    expect(configError({ DATABASE_URL: 'postgres://a@b/c', DATABASE_DIRECT_URL: 'mysql://h:secret@db' }).message).not.toContain('secret');
  });
});
