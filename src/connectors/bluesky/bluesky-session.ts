import { Agent, XRPCError } from '@atproto/api';
import { createHash } from 'node:crypto';
import type { FetchLike } from '../../common/net/guarded-fetch';
import type { BlueskyConfig, BlueskyCredentials, StoredSession } from './bluesky-config';

/**
 * App-password sessions, kept and reused (SPEC §5): `createSession` is limited to about 100 a
 * day per account on bsky.social (30 per 5 minutes on any PDS), so Herald logs in once and then
 * lives on the session: the access token (~2 h) is refreshed with the refresh token (~90 days)
 * when the PDS answers `400 ExpiredToken`, and a new login happens only when the refresh itself
 * is refused.
 *
 * Where the session lives:
 * - In the account's encrypted credentials: after a login or refresh the connector hands the new
 *   session back as `credentialsUpdate`; the worker seals it and bumps credentials_version, so
 *   every process (and the next start) picks it up instead of logging in.
 * - In memory, one `BlueskySession` per account: attempts of one account run concurrently (up to
 *   5 in flight), and they share its agent, so one refresh or login serves all of them
 *   (single-flight). Credentials handed in later by the worker are compared with the tokens this
 *   process has held: its own session coming back (stored by us, or a job claimed before the
 *   store) changes nothing; a session this process has never seen (another process refreshed or
 *   logged in, or the user re-entered the password) is adopted.
 *
 * Across processes: the refresh token rotates on every refresh. When two processes hold the same
 * session and both see it expire, the first refresh wins; the second process's refresh token may
 * then be refused (the PDS keeps a replaced refresh token usable only for a short grace period),
 * and that process logs in again: one extra login per process per expiry at worst, never one per
 * post. Whichever session is stored last is the one every process converges on.
 */

/** The XRPC errors that mean "this access token is no longer accepted": refresh, then retry. */
const SESSION_ERRORS = new Set(['ExpiredToken', 'InvalidToken']);

export function isSessionRejected(err: unknown): boolean {
  if (!(err instanceof XRPCError)) return false;
  return SESSION_ERRORS.has(err.error ?? '') || err.status === 401;
}

/** A refresh the PDS refused (the refresh token expired, rotated away or was revoked): log in again. */
function isRefreshRefused(err: unknown): boolean {
  return err instanceof XRPCError && (err.status === 400 || err.status === 401 || err.status === 403);
}

/** After a refused login, the same password is not tried again for this long (rate limits). */
const FAILED_LOGIN_MEMORY_MS = 60_000;

export interface SessionCounters {
  logins: number;
  refreshes: number;
}

export class BlueskySession {
  readonly agent: Agent;
  private session: StoredSession | null;
  /** Refresh tokens this process has held for the account: the lineage of its own session. */
  private readonly seen = new Set<string>();
  private renewing: Promise<StoredSession> | null = null;
  private failedLogin: { at: number; error: unknown } | null = null;
  readonly counters: SessionCounters = { logins: 0, refreshes: 0 };

  constructor(
    readonly identity: string,
    private readonly config: BlueskyConfig,
    private readonly appPassword: string,
    session: StoredSession | null,
    private readonly fetch: FetchLike,
    private readonly now: () => number = Date.now,
  ) {
    this.session = session;
    if (session) this.seen.add(session.refreshJwt);
    const self = this;
    const base = new URL(config.service.endsWith('/') ? config.service : `${config.service}/`);
    // A SessionManager of our own rather than @atproto/api's CredentialSession: that one refreshes
    // inside every request on its own, treats any 401 as an expired token, and after a login sends
    // requests to the PDS named in the DID document instead of the configured service. Here the
    // refresh policy is explicit (see call()) and every request goes to `service` (bsky.social
    // proxies repo calls to the account's PDS).
    this.agent = new Agent({
      get did() {
        return self.session?.did;
      },
      fetchHandler(url: string, init: RequestInit): Promise<Response> {
        const headers = new Headers(init.headers);
        if (!headers.has('authorization') && self.session) headers.set('authorization', `Bearer ${self.session.accessJwt}`);
        return self.fetch(new URL(url.replace(/^\//, ''), base), { ...init, headers });
      },
    });
  }

  /** The session as it should be stored (null before the first login or after a refused one). */
  current(): StoredSession | null {
    return this.session;
  }

  /**
   * Credentials the worker handed in for an attempt. A session this process has never held is
   * newer than ours (another process stored it) and replaces ours; one we have held is ours.
   */
  adopt(stored: StoredSession | null): void {
    if (stored === null || this.seen.has(stored.refreshJwt)) return;
    this.seen.add(stored.refreshJwt);
    this.session = stored;
  }

  /**
   * Runs one XRPC call with a valid session: logs in first if there is none; when the PDS says
   * the access token expired (or was refused), renews the session once and runs the call again.
   */
  async call<T>(fn: (agent: Agent) => Promise<T>): Promise<T> {
    const used = await this.ensure();
    try {
      return await fn(this.agent);
    } catch (err) {
      if (!isSessionRejected(err)) throw err;
      await this.renew(used.accessJwt);
      return await fn(this.agent);
    }
  }

  /** A session, logging in only when there is none. */
  ensure(): Promise<StoredSession> {
    if (this.renewing) return this.renewing;
    if (this.session) return Promise.resolve(this.session);
    return this.singleFlight(() => this.login());
  }

  /**
   * Replaces a session whose access token `staleAccessJwt` was refused. Concurrent attempts that
   * saw the same token expire share one refresh; one that comes after it finished finds a newer
   * token and does nothing.
   */
  private renew(staleAccessJwt: string): Promise<StoredSession> {
    if (this.renewing) return this.renewing;
    if (this.session && this.session.accessJwt !== staleAccessJwt) return Promise.resolve(this.session);
    return this.singleFlight(() => this.refreshOrLogin());
  }

  private singleFlight(fn: () => Promise<StoredSession>): Promise<StoredSession> {
    const promise = fn().finally(() => {
      if (this.renewing === promise) this.renewing = null;
    });
    this.renewing = promise;
    return promise;
  }

  private async refreshOrLogin(): Promise<StoredSession> {
    const old = this.session;
    if (!old) return this.login();
    try {
      const res = await this.agent.com.atproto.server.refreshSession(undefined, {
        headers: { authorization: `Bearer ${old.refreshJwt}` },
      });
      this.counters.refreshes += 1;
      if (res.data.did !== old.did) throw new Error('the PDS refreshed the session of another account');
      return this.set({ accessJwt: res.data.accessJwt, refreshJwt: res.data.refreshJwt, did: res.data.did, handle: res.data.handle });
    } catch (err) {
      // A network failure or a 5xx says nothing about the refresh token: keep it and let the
      // attempt be retried, rather than spending a login.
      if (!isRefreshRefused(err)) throw err;
      this.session = null;
      return this.login();
    }
  }

  private async login(): Promise<StoredSession> {
    const failed = this.failedLogin;
    // The same password was just refused: asking again only spends the account's login budget.
    if (failed && this.now() - failed.at < FAILED_LOGIN_MEMORY_MS) throw failed.error;
    try {
      this.counters.logins += 1;
      const res = await this.agent.com.atproto.server.createSession({
        identifier: this.config.identifier,
        password: this.appPassword,
      });
      this.failedLogin = null;
      return this.set({ accessJwt: res.data.accessJwt, refreshJwt: res.data.refreshJwt, did: res.data.did, handle: res.data.handle });
    } catch (err) {
      this.session = null;
      if (err instanceof XRPCError && (err.status === 401 || err.status === 400)) this.failedLogin = { at: this.now(), error: err };
      throw err;
    }
  }

  private set(session: StoredSession): StoredSession {
    this.session = session;
    this.seen.add(session.refreshJwt);
    return session;
  }
}

/** Identifies the login an in-memory session belongs to (the password only as a hash). */
export function sessionIdentity(config: BlueskyConfig, credentials: BlueskyCredentials): string {
  const passwordHash = createHash('sha256').update(credentials.appPassword).digest('base64url');
  return `${config.service}\n${config.identifier}\n${passwordHash}`;
}

/** One in-memory session per account (see the file comment). */
export class BlueskySessions {
  private readonly byAccount = new Map<string, BlueskySession>();

  constructor(private readonly fetch: FetchLike) {}

  for(accountId: string, config: BlueskyConfig, credentials: BlueskyCredentials): BlueskySession {
    const identity = sessionIdentity(config, credentials);
    const existing = this.byAccount.get(accountId);
    if (existing && existing.identity === identity) {
      existing.adopt(credentials.session);
      return existing;
    }
    const created = new BlueskySession(identity, config, credentials.appPassword, credentials.session, this.fetch);
    this.byAccount.set(accountId, created);
    return created;
  }

  /** Logins and refreshes done in this process for an account (tests, metrics). */
  counters(accountId: string): SessionCounters | null {
    return this.byAccount.get(accountId)?.counters ?? null;
  }
}
