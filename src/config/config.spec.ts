import express from 'express';
import fc from 'fast-check';
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
    // An idle worker sweeps once a minute; it polls every second only while at work (maintenance-plan.ts).
    expect(c.worker.pollIntervalMs).toBe(1000);
    expect(c.worker.sweepIntervalMs).toBe(60_000);
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

  describe('TRUST_PROXY ranges', () => {
    const trustProxyError = (value: string): ConfigError => configError({ TRUST_PROXY: value });

    it.each([
      ['0.0.0.0/0', '0.0.0.0/0'],
      ['::/0', '::/0'],
      ['10.0.0.0/8, 0.0.0.0/0', '0.0.0.0/0'],
      // An IPv4-mapped IPv6 range is an IPv4 range (proxy-addr matches IPv4 clients with it).
      ['::ffff:0.0.0.0/96', '::ffff:0.0.0.0/96'],
      ['::ffff:0:0/97', '::ffff:0:0/97'],
      ['1.2.3.4/33', '1.2.3.4/33'],
      ['::1/129', '::1/129'],
      ['10.0.0.0/255.0.0.0', '10.0.0.0/255.0.0.0'],
      ['999.1.1.1', '999.1.1.1'],
    ])('refuses %j at start, naming TRUST_PROXY and %j (not a TypeError from Express)', (value, entry) => {
      const err = trustProxyError(value);
      expect(err.variable).toBe('TRUST_PROXY');
      expect(err.message).toContain('TRUST_PROXY');
      expect(err.message).toContain(`"${entry}"`);
    });

    it.each([
      ['4.0.0.0/6', 'IPv4 ranges may be at most /8 wide'],
      ['2001:db8::/15', 'IPv6 ranges may be at most /16 wide'],
      ['2000::/3', 'IPv6 ranges may be at most /16 wide'],
    ])('refuses %j, wider than a proxy network: %s', (value, why) => {
      const err = trustProxyError(value);
      expect(err.message).toContain(`"${value}"`);
      expect(err.message).toContain(why);
    });

    it('refuses ranges that together cover every address of a family ("everyone" in pieces)', () => {
      const halves = trustProxyError('0.0.0.0/1,128.0.0.0/1,::/1,8000::/1');
      expect(halves.variable).toBe('TRUST_PROXY');
      // Each half alone is already wider than /8; the message names the first such entry.
      expect(halves.message).toContain('"0.0.0.0/1"');
      // 256 ranges of /8: each allowed alone, together every IPv4 address.
      const all = Array.from({ length: 256 }, (_, i) => `${i}.0.0.0/8`).join(',');
      const err = trustProxyError(all);
      expect(err.message).toContain('TRUST_PROXY');
      expect(err.message).toContain('together cover every IPv4 address');
    });

    it('starts Express with every value it accepts, and refuses the others by name (never a TypeError)', () => {
      const v4 = fc
        .tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255), fc.option(fc.integer({ min: 0, max: 34 })))
        .map(([a, b, c, d, p]) => `${a}.${b}.${c}.${d}${p === null ? '' : `/${p}`}`);
      const v6 = fc
        .tuple(fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }), fc.option(fc.integer({ min: 0, max: 130 })))
        .map(([groups, p]) => `${groups.map((g) => g.toString(16)).join(':')}${p === null ? '' : `/${p}`}`);
      const mapped = fc.tuple(fc.nat(255), fc.nat(255), fc.integer({ min: 90, max: 130 })).map(([a, b, p]) => `::ffff:${a}.${b}.0.0/${p}`);
      fc.assert(
        fc.property(
          fc.array(fc.oneof(v4, v6, mapped, fc.constantFrom('loopback', 'uniquelocal')), { minLength: 1, maxLength: 4 }),
          (entries) => {
            let trustProxy: false | number | string[];
            try {
              trustProxy = loadConfig({ TRUST_PROXY: entries.join(',') }).trustProxy;
            } catch (err) {
              expect(err).toBeInstanceOf(ConfigError);
              expect((err as ConfigError).variable).toBe('TRUST_PROXY');
              return;
            }
            // What app.ts does at start: it threw a TypeError for 0.0.0.0/0 and prefixes past /32 or /128.
            expect(() => express().set('trust proxy', trustProxy)).not.toThrow();
          },
        ),
        { seed: 20261205, numRuns: 300 },
      );
    });

    it("takes what real proxies need: single hosts, private subnets, a CDN's published ranges, the names", () => {
      const ok = [
        '203.0.113.7',
        '::1',
        '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10',
        'fc00::/7',
        'fe80::/10',
        '2400:cb00::/32,2a06:98c0::/29,173.245.48.0/20,104.16.0.0/13',
        '::ffff:10.0.0.0/104',
        'loopback,linklocal,uniquelocal',
      ];
      for (const value of ok) expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(value.split(','));
    });
  });

  it('sweeps for digests at second 0 of every minute by default, or every divisor of 60 seconds, and refuses other intervals by name', () => {
    expect(loadConfig({}).notifications.sweepIntervalSeconds).toBe(60);
    expect(loadConfig({ NOTIFICATIONS_SWEEP_INTERVAL_SECONDS: '5' }).notifications.sweepIntervalSeconds).toBe(5);
    expect(() => loadConfig({ NOTIFICATIONS_SWEEP_INTERVAL_SECONDS: '7' })).toThrow(
      'NOTIFICATIONS_SWEEP_INTERVAL_SECONDS must divide 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60), got "7"',
    );
    expect(() => loadConfig({ NOTIFICATIONS_SWEEP_INTERVAL_SECONDS: '120' })).toThrow('NOTIFICATIONS_SWEEP_INTERVAL_SECONDS');
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
