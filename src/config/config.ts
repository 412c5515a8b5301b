import * as path from 'node:path';
import { NEWEST_LINKEDIN_VERSION } from './linkedin-versions';
import { PROXY_NAMES, trustedProxiesProblem } from './trust-proxy';

/**
 * The configuration of a Herald process as read once from the environment at start.
 * Nothing else in the code base reads `process.env`: services receive this object.
 */
export interface EnvConfig {
  port: number;
  host: string;
  /** `null` means: start the embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | null;
  databasePoolSize: number;
  /**
   * A connection string that reaches PostgreSQL itself when DATABASE_URL goes through a pooler in
   * transaction mode: the LISTEN connection and the migrations (a session advisory lock) use it.
   * `null`: they use DATABASE_URL.
   */
  databaseDirectUrl: string | null;
  /** Named prepared statements on pooled connections (off behind a pooler that cannot keep them). */
  databasePreparedStatements: boolean;
  /**
   * idle_in_transaction_session_timeout of Herald's transactions (SET LOCAL, so a pooler is fine):
   * a process frozen inside a transaction (SIGSTOP, a VM paused) loses its session after this long
   * instead of holding its row locks for ever. 0: PostgreSQL's own setting applies.
   */
  databaseIdleInTransactionTimeoutMs: number;
  dataDir: string;
  embeddedPostgresPort: number;
  publicUrl: string;
  bootstrapApiKey: string | null;
  /** 32 raw bytes; `null` means: read or generate `<dataDir>/secret.key`. */
  secretKey: Buffer | null;
  smtpUrl: string | null;
  mailFrom: string;
  allowPrivateUrls: boolean;
  /**
   * Which reverse proxies Herald believes (Express's `trust proxy`): false (the default: the
   * socket's peer is the client, X-Forwarded-* are ignored), a number of proxy hops, or a list of
   * proxy addresses / subnets (`loopback`, `uniquelocal`, `10.0.0.0/8`, …). When the peer is
   * trusted, the client address (wrong-key slow-down, logs) comes from X-Forwarded-For and the
   * scheme from X-Forwarded-Proto (cookies are Secure when it says https).
   */
  trustProxy: false | number | string[];
  linkedin: {
    clientId: string | null;
    clientSecret: string | null;
    /** `LinkedIn-Version` header (YYYYMM); LinkedIn retires a version about a year after it ships. */
    apiVersion: string;
    /** Defaults for accounts that do not set `apiBaseUrl` / `oauthBaseUrl`. */
    apiBaseUrl: string;
    oauthBaseUrl: string;
  };
  bluesky: {
    /**
     * The private key of Herald's Bluesky OAuth client (ES256: PKCS#8 PEM or a JWK), from
     * BLUESKY_OAUTH_PRIVATE_KEY; `null`: a key generated once and kept in the database, sealed
     * with HERALD_SECRET_KEY.
     */
    oauthPrivateKey: string | null;
    /** The scopes Herald asks for ("Connect with Bluesky"); always includes `atproto`. */
    oauthScope: string;
    /** PLC directory that resolves did:plc identities (OAuth connect). */
    plcUrl: string;
    /** An XRPC service that resolves handles (`com.atproto.identity.resolveHandle`); `null`: DNS and HTTPS, as the AT Protocol defines. */
    handleResolverUrl: string | null;
  };
  media: {
    /** How long a signed media link (GET /media/:id) stays valid. */
    urlTtlSeconds: number;
    /** Per-workspace quota: total bytes of stored images, and their number. */
    quotaBytes: number;
    quotaCount: number;
  };
  metrics: {
    /** Bearer token that GET /metrics requires; `null` turns /metrics off (403). */
    token: string | null;
    /** How long gauges read from the database are reused between scrapes (0: read at every scrape). */
    databaseRefreshMs: number;
  };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** LOG_FORMAT: `auto` = readable lines on a terminal, JSON lines otherwise (main.ts decides). */
  logFormat: 'auto' | 'json' | 'pretty';
  worker: {
    enabled: boolean;
    batchSize: number;
    concurrency: number;
    /**
     * How often a worker looks at the queue again while it is at work, while due jobs wait that
     * no claim could take (an open circuit, a full account), or while its LISTEN connection is
     * down. An idle worker does not poll (worker/maintenance-plan.ts).
     */
    pollIntervalMs: number;
    /**
     * The idle worker's safety sweep: crash recovery, deadlines and a claim at least this often,
     * for what no NOTIFY and no known moment announced (maintenance-plan.ts).
     */
    sweepIntervalMs: number;
    leaseMs: number;
    /**
     * The whole budget of one attempt, every HTTP call of it together (session, look-ups, uploads,
     * link card, the post): the AbortSignal handed to the connector fires when it is spent.
     */
    attemptTimeoutMs: number;
    shutdownGraceMs: number;
    maxInFlightPerAccount: number;
    /** An account whose circuit just closed ramps its in-flight cap from 1 to its cap over this long (worker/slow-start.ts); 0: off. */
    slowStartMs: number;
    /**
     * During that ramp its request rate also ramps, from half of this to this many per second
     * (slowStartBudget, worker/slow-start.ts); 0: the in-flight ramp alone.
     */
    slowStartRatePerS: number;
  };
  retry: {
    baseDelayMs: number;
    maxDelayMs: number;
    maxAttempts: number;
    maxServerDelayMs: number;
    /** `full`: each retry waits a uniform draw in [0, ceiling]; `none`: the ceiling itself (for comparison only). */
    jitter: RetryJitter;
  };
  circuit: {
    failureThreshold: number;
    cooldownMs: number;
    disableThreshold: number;
  };
  http: {
    connectTimeoutMs: number;
    totalTimeoutMs: number;
    responseExcerptBytes: number;
  };
  notifications: {
    /** Run the digest sweep, the alert pickup and the mail sender in this process. */
    enabled: boolean;
    /**
     * How often alerts and due mails are looked for while the LISTEN connection is down; with it
     * up, a NOTIFY from the outboxes and the due time of the next mail wake the sender instead.
     */
    pollIntervalMs: number;
    /** How often the digest sweep and the token scan run: a divisor of 60, so sweeps fall on whole seconds of every minute. */
    sweepIntervalSeconds: number;
  };
  mail: {
    /** Tries per mail (4xx answers and network errors are retried) before it is given up as failed. */
    maxAttempts: number;
    /** Full-jitter backoff between tries: base × 2^(n−1), capped at maxDelay. */
    retryBaseDelayMs: number;
    retryMaxDelayMs: number;
    /** Connect, greeting and idle-socket timeout of one SMTP conversation. */
    timeoutMs: number;
  };
}

/** Thrown when a variable has a bad value; the message names the variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export type RetryJitter = 'full' | 'none';
const RETRY_JITTERS = ['full', 'none'] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

function readString(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined) return null;
  const value = raw.trim();
  return value === '' ? null : value;
}

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = readString(env, name);
  if (value === null) return fallback;
  if (!/^\d+$/.test(value)) {
    throw new ConfigError(name, `must be a whole number between ${min} and ${max}, got "${value}"`);
  }
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be a whole number between ${min} and ${max}, got "${value}"`);
  }
  return n;
}

/** NOTIFICATIONS_SWEEP_INTERVAL_SECONDS: a divisor of 60, so that 60 keeps the sweep at second 0 of every minute. */
function readSweepInterval(env: Env): number {
  const seconds = readInt(env, 'NOTIFICATIONS_SWEEP_INTERVAL_SECONDS', 60, 1, 60);
  if (60 % seconds !== 0) {
    throw new ConfigError(
      'NOTIFICATIONS_SWEEP_INTERVAL_SECONDS',
      `must divide 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60), got "${seconds}"`,
    );
  }
  return seconds;
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const value = readString(env, name);
  if (value === null) return fallback;
  const lower = value.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) return true;
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  throw new ConfigError(name, `must be true or false, got "${value}"`);
}

/**
 * TRUST_PROXY: false, a hop count (1–10), or a comma-separated list of addresses, subnets and
 * names. Never `true` (everyone), nor ranges that are too wide or together cover everyone
 * (trust-proxy.ts has the bounds and why).
 */
function readTrustProxy(env: Env): false | number | string[] {
  const value = readString(env, 'TRUST_PROXY');
  if (value === null || ['false', '0', 'no', 'off'].includes(value.toLowerCase())) return false;
  if (/^\d+$/.test(value)) {
    const n = Number(value);
    if (n >= 1 && n <= 10) return n;
  }
  if (value.toLowerCase() === 'true') {
    throw new ConfigError(
      'TRUST_PROXY',
      'must name the proxies (e.g. loopback, 10.0.0.0/8) or count them (1); "true" would believe any client that sends X-Forwarded-For',
    );
  }
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
    .map((e) => (PROXY_NAMES.includes(e.toLowerCase()) ? e.toLowerCase() : e));
  const problem = entries.length === 0 ? { malformed: value } : trustedProxiesProblem(entries);
  if (problem === null) return entries;
  if ('problem' in problem) throw new ConfigError('TRUST_PROXY', problem.problem);
  throw new ConfigError(
    'TRUST_PROXY',
    `must be false, a number of proxy hops (1 to 10), or a comma-separated list of proxy addresses, subnets (10.0.0.0/8) or loopback, linklocal, uniquelocal; got "${problem.malformed}"`,
  );
}

function readUrl(env: Env, name: string, protocols: string[]): string | null {
  const value = readString(env, name);
  if (value === null) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // The value may hold a password: never echo it back.
    throw new ConfigError(name, `is not a valid URL (expected ${protocols.map((p) => `${p}//…`).join(' or ')})`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return value;
}

/** HERALD_SECRET_KEY: 32 bytes as 64 hex characters or base64 (44 characters with padding). */
export function parseSecretKey(value: string, name = 'HERALD_SECRET_KEY'): Buffer {
  const trimmed = value.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (!key || key.length !== 32) {
    throw new ConfigError(name, 'must be 32 random bytes written as 64 hex characters or base64 (e.g. `openssl rand -base64 32`)');
  }
  return key;
}

/**
 * The LinkedIn API version sent as `LinkedIn-Version`. The default is the newest version
 * LinkedIn documents as released (src/config/linkedin-versions.ts cites the page); from 60 days
 * before a version's sunset Herald warns (log, page, digest, /health/ready), and when it is
 * retired LinkedIn answers 426 NONEXISTENT_VERSION and the connector's message points here.
 */
export const DEFAULT_LINKEDIN_VERSION = NEWEST_LINKEDIN_VERSION;

function readLinkedInVersion(env: Env): string {
  const value = readString(env, 'LINKEDIN_VERSION');
  if (value === null) return DEFAULT_LINKEDIN_VERSION;
  const m = /^(\d{4})(\d{2})$/.exec(value);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 12) {
    throw new ConfigError(
      'LINKEDIN_VERSION',
      `must be a LinkedIn API version as YYYYMM (e.g. ${DEFAULT_LINKEDIN_VERSION}), got "${value}"`,
    );
  }
  return value;
}

/**
 * The narrowest scopes that let Herald post: create `app.bsky.feed.post` records and upload
 * images (the granular scopes of the AT Protocol's OAuth, "Permissions"). A PDS that predates
 * them needs BLUESKY_OAUTH_SCOPE="atproto transition:generic" (what an app password can do).
 */
export const DEFAULT_BLUESKY_OAUTH_SCOPE = 'atproto repo:app.bsky.feed.post?action=create blob:image/*';

function readBlueskyScope(env: Env): string {
  const value = readString(env, 'BLUESKY_OAUTH_SCOPE');
  if (value === null) return DEFAULT_BLUESKY_OAUTH_SCOPE;
  const scopes = value.split(/\s+/);
  if (!scopes.includes('atproto')) {
    throw new ConfigError('BLUESKY_OAUTH_SCOPE', `must include "atproto" (e.g. "${DEFAULT_BLUESKY_OAUTH_SCOPE}"), got "${value}"`);
  }
  if (new Set(scopes).size !== scopes.length) throw new ConfigError('BLUESKY_OAUTH_SCOPE', `names a scope twice: "${value}"`);
  return scopes.join(' ');
}

function readMail(env: Env): EnvConfig['mail'] {
  const mail = {
    maxAttempts: readInt(env, 'MAIL_MAX_ATTEMPTS', 10, 1, 100),
    retryBaseDelayMs: readInt(env, 'MAIL_RETRY_BASE_DELAY_MS', 30_000, 1, 86_400_000),
    retryMaxDelayMs: readInt(env, 'MAIL_RETRY_MAX_DELAY_MS', 3_600_000, 1, 7 * 86_400_000),
    timeoutMs: readInt(env, 'MAIL_TIMEOUT_MS', 30_000, 100, 600_000),
  };
  if (mail.retryMaxDelayMs < mail.retryBaseDelayMs) {
    throw new ConfigError('MAIL_RETRY_MAX_DELAY_MS', `must be at least MAIL_RETRY_BASE_DELAY_MS (${mail.retryBaseDelayMs})`);
  }
  return mail;
}

function readRetryJitter(env: Env): RetryJitter {
  const value = (readString(env, 'RETRY_JITTER') ?? 'full').toLowerCase();
  if (!(RETRY_JITTERS as readonly string[]).includes(value)) {
    throw new ConfigError('RETRY_JITTER', `must be one of ${RETRY_JITTERS.join(', ')}, got "${value}"`);
  }
  return value as RetryJitter;
}

export function loadConfig(env: Env, cwd: string = process.cwd()): EnvConfig {
  const port = readInt(env, 'PORT', 3000, 0, 65535);
  const bootstrapApiKey = readString(env, 'HERALD_API_KEY');
  if (bootstrapApiKey !== null && bootstrapApiKey.length < 16) {
    throw new ConfigError('HERALD_API_KEY', 'must be at least 16 characters long');
  }
  if (bootstrapApiKey !== null && /\s/.test(bootstrapApiKey)) {
    throw new ConfigError('HERALD_API_KEY', 'must not contain whitespace');
  }
  const metricsToken = readString(env, 'METRICS_TOKEN');
  if (metricsToken !== null && (metricsToken.length < 16 || /\s/.test(metricsToken))) {
    // Never echo the value: it is a credential.
    throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters long, without whitespace (e.g. `openssl rand -hex 32`)');
  }
  const secret = readString(env, 'HERALD_SECRET_KEY');
  const logLevel = (readString(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const logFormat = (readString(env, 'LOG_FORMAT') ?? 'auto').toLowerCase();
  if (!(LOG_FORMATS as readonly string[]).includes(logFormat)) {
    throw new ConfigError('LOG_FORMAT', `must be one of ${LOG_FORMATS.join(', ')}, got "${logFormat}"`);
  }
  const publicUrl = readUrl(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port === 0 ? 3000 : port}`;
  const mailFrom = readString(env, 'MAIL_FROM') ?? 'Herald <herald@localhost>';
  if (!/@/.test(mailFrom)) throw new ConfigError('MAIL_FROM', `must be an email address, got "${mailFrom}"`);

  const retry = {
    baseDelayMs: readInt(env, 'RETRY_BASE_DELAY_MS', 2000, 1, 86_400_000),
    maxDelayMs: readInt(env, 'RETRY_MAX_DELAY_MS', 3_600_000, 1, 7 * 86_400_000),
    maxAttempts: readInt(env, 'RETRY_MAX_ATTEMPTS', 16, 1, 1000),
    maxServerDelayMs: readInt(env, 'RETRY_MAX_SERVER_DELAY_MS', 86_400_000, 0, 30 * 86_400_000),
    jitter: readRetryJitter(env),
  };
  const leaseMs = readInt(env, 'WORKER_LEASE_MS', 60_000, 1000, 3_600_000);
  const totalTimeoutMs = readInt(env, 'HTTP_TOTAL_TIMEOUT_MS', 20_000, 100, 600_000);
  // Leases are renewed every third of WORKER_LEASE_MS while the worker holds a job, so an attempt
  // may outlast one lease; the lease is how long a worker may be silent (dead, cut off from the
  // database) before others take its jobs over. An attempt ends at WORKER_ATTEMPT_TIMEOUT_MS, or
  // earlier when its lease could not be renewed (see worker/lease-queue.ts).
  const attemptTimeoutMs = readInt(env, 'WORKER_ATTEMPT_TIMEOUT_MS', Math.max(60_000, totalTimeoutMs), 1000, 3_600_000);
  if (attemptTimeoutMs < totalTimeoutMs) {
    // One request may use its whole total timeout; an attempt makes at least one.
    throw new ConfigError(
      'WORKER_ATTEMPT_TIMEOUT_MS',
      `must be at least HTTP_TOTAL_TIMEOUT_MS (${totalTimeoutMs}), got ${attemptTimeoutMs}`,
    );
  }
  if (retry.maxDelayMs < retry.baseDelayMs) {
    throw new ConfigError('RETRY_MAX_DELAY_MS', `must be at least RETRY_BASE_DELAY_MS (${retry.baseDelayMs})`);
  }

  const databaseUrl = readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const databaseDirectUrl = readUrl(env, 'DATABASE_DIRECT_URL', ['postgres:', 'postgresql:']);
  if (databaseDirectUrl !== null && databaseUrl === null) {
    throw new ConfigError('DATABASE_DIRECT_URL', 'needs DATABASE_URL (the embedded PostgreSQL is reached directly anyway)');
  }

  return {
    port,
    host: readString(env, 'HOST') ?? '0.0.0.0',
    databaseUrl,
    databasePoolSize: readInt(env, 'DATABASE_POOL_SIZE', 20, 2, 500),
    databaseDirectUrl,
    databasePreparedStatements: readBool(env, 'DATABASE_PREPARED_STATEMENTS', true),
    databaseIdleInTransactionTimeoutMs: readInt(env, 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 10_000, 0, 3_600_000),
    dataDir: path.resolve(cwd, readString(env, 'HERALD_DATA_DIR') ?? '.data'),
    embeddedPostgresPort: readInt(env, 'EMBEDDED_POSTGRES_PORT', 54329, 1, 65535),
    publicUrl: publicUrl.replace(/\/+$/, ''),
    bootstrapApiKey,
    secretKey: secret === null ? null : parseSecretKey(secret),
    smtpUrl: readUrl(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom,
    allowPrivateUrls: readBool(env, 'HERALD_ALLOW_PRIVATE_URLS', false),
    trustProxy: readTrustProxy(env),
    linkedin: {
      clientId: readString(env, 'LINKEDIN_CLIENT_ID'),
      clientSecret: readString(env, 'LINKEDIN_CLIENT_SECRET'),
      apiVersion: readLinkedInVersion(env),
      apiBaseUrl: (readUrl(env, 'LINKEDIN_API_BASE_URL', ['http:', 'https:']) ?? 'https://api.linkedin.com').replace(/\/+$/, ''),
      oauthBaseUrl: (readUrl(env, 'LINKEDIN_OAUTH_BASE_URL', ['http:', 'https:']) ?? 'https://www.linkedin.com').replace(/\/+$/, ''),
    },
    bluesky: {
      // A private key: checked when the key is loaded (bluesky-oauth-keys.ts), never echoed.
      oauthPrivateKey: readString(env, 'BLUESKY_OAUTH_PRIVATE_KEY'),
      oauthScope: readBlueskyScope(env),
      plcUrl: (readUrl(env, 'BLUESKY_PLC_URL', ['http:', 'https:']) ?? 'https://plc.directory').replace(/\/+$/, ''),
      handleResolverUrl: readUrl(env, 'BLUESKY_HANDLE_RESOLVER_URL', ['http:', 'https:'])?.replace(/\/+$/, '') ?? null,
    },
    media: {
      urlTtlSeconds: readInt(env, 'MEDIA_URL_TTL_SECONDS', 7 * 86_400, 60, 365 * 86_400),
      // 1 GiB and 10,000 images per workspace: room for years of posts with images (a 5 MB
      // image per post, a few posts a day), small enough that one tenant cannot fill the disk.
      quotaBytes: readInt(env, 'MEDIA_QUOTA_BYTES', 1024 * 1024 * 1024, 5 * 1024 * 1024, Number.MAX_SAFE_INTEGER),
      quotaCount: readInt(env, 'MEDIA_QUOTA_COUNT', 10_000, 1, 100_000_000),
    },
    metrics: {
      token: metricsToken,
      databaseRefreshMs: readInt(env, 'METRICS_DB_REFRESH_SECONDS', 30, 0, 3600) * 1000,
    },
    logLevel: logLevel as EnvConfig['logLevel'],
    logFormat: logFormat as EnvConfig['logFormat'],
    worker: {
      enabled: readBool(env, 'WORKER_ENABLED', true),
      batchSize: readInt(env, 'WORKER_BATCH_SIZE', 100, 1, 1000),
      concurrency: readInt(env, 'WORKER_CONCURRENCY', 200, 1, 10_000),
      pollIntervalMs: readInt(env, 'WORKER_POLL_INTERVAL_MS', 1000, 10, 600_000),
      sweepIntervalMs: readInt(env, 'WORKER_SWEEP_INTERVAL_MS', 60_000, 10, 3_600_000),
      leaseMs,
      attemptTimeoutMs,
      shutdownGraceMs: readInt(env, 'WORKER_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
      maxInFlightPerAccount: readInt(env, 'ACCOUNT_MAX_IN_FLIGHT', 5, 1, 1000),
      slowStartMs: readInt(env, 'WORKER_SLOW_START_MS', 10_000, 0, 3_600_000),
      slowStartRatePerS: readInt(env, 'WORKER_SLOW_START_RATE', 20, 0, 100_000),
    },
    retry,
    circuit: {
      failureThreshold: readInt(env, 'CIRCUIT_FAILURE_THRESHOLD', 5, 1, 1000),
      cooldownMs: readInt(env, 'CIRCUIT_COOLDOWN_MS', 30_000, 100, 86_400_000),
      disableThreshold: readInt(env, 'CIRCUIT_DISABLE_THRESHOLD', 50, 1, 100_000),
    },
    http: {
      connectTimeoutMs: readInt(env, 'HTTP_CONNECT_TIMEOUT_MS', 5_000, 100, 120_000),
      totalTimeoutMs,
      responseExcerptBytes: readInt(env, 'HTTP_RESPONSE_EXCERPT_BYTES', 2048, 0, 65_536),
    },
    notifications: {
      enabled: readBool(env, 'NOTIFICATIONS_ENABLED', true),
      pollIntervalMs: readInt(env, 'NOTIFICATIONS_POLL_INTERVAL_MS', 2000, 10, 600_000),
      sweepIntervalSeconds: readSweepInterval(env),
    },
    mail: readMail(env),
  };
}

/** The configuration the application runs with: the database and the credentials key resolved. */
export interface HeraldConfig extends Omit<EnvConfig, 'databaseUrl' | 'secretKey'> {
  databaseUrl: string;
  secretKey: Buffer;
  /** True when Herald started its own embedded PostgreSQL. */
  embedded: boolean;
}

export const HERALD_CONFIG = Symbol('HERALD_CONFIG');
