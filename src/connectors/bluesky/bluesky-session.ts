import type { Agent } from '@atproto/api';
import { LRUCache } from 'lru-cache';
import { createHash } from 'node:crypto';
import { untilAborted } from '../../common/net/deadline';
import type { FetchLike } from '../../common/net/guarded-fetch';
import type { BlueskyConfig, BlueskyCredentials, StoredSession } from './bluesky-config';
import { atprotoApi, isXrpcError } from './atproto';
import { xrpcStatus } from './bluesky-outcome';

/**
 * App-password sessions, kept and reused: `createSession` is limited to about 100 a
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
 *
 * Deadlines: a login or refresh is shared by the attempts of an account, so it is not tied to any
 * one attempt's signal (one attempt reaching its deadline must not fail the others' login); it is
 * bounded by the outbound layer's total timeout like every request. Each attempt waits for it
 * only until its own signal fires (`untilAborted`), and its own calls carry its signal.
 */

/** The XRPC errors that mean "this access token is no longer accepted": refresh, then retry. */
const SESSION_ERRORS = new Set(['ExpiredToken', 'InvalidToken']);

export function isSessionRejected(err: unknown): boolean {
  if (!isXrpcError(err)) return false;
  return SESSION_ERRORS.has(err.error ?? '') || xrpcStatus(err) === 401;
}

/** A refresh the PDS refused (the refresh token expired, rotated away or was revoked): log in again. */
function isRefreshRefused(err: unknown): boolean {
  return isXrpcError(err) && [400, 401, 403].includes(xrpcStatus(err));
}

/** After a refused login, the same password is not tried again for this long (rate limits). */
const FAILED_LOGIN_MEMORY_MS = 60_000;

/**
 * Refresh tokens remembered as "ours". The lineage only has to recognise sessions this process
 * stored recently (a job claimed before the store hands the previous one back); a refresh every
 * ~2 h would otherwise grow the set for as long as the process runs.
 */
const SEEN_TOKENS = 16;

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
    if (session) this.remember(session.refreshJwt);
    const current = (): StoredSession | null => this.session;
    const base = new URL(config.service.endsWith('/') ? config.service : `${config.service}/`);
    // A SessionManager of our own rather than @atproto/api's CredentialSession: that one refreshes
    // inside every request on its own, treats any 401 as an expired token, and after a login sends
    // requests to the PDS named in the DID document instead of the configured service. Here the
    // refresh policy is explicit (see call()) and every request goes to `service` (bsky.social
    // proxies repo calls to the account's PDS).
    this.agent = new (atprotoApi().Agent)({
      get did() {
        return current()?.did;
      },
      fetchHandler: (url: string, init: RequestInit): Promise<Response> => {
        const headers = new Headers(init.headers);
        const session = current();
        if (!headers.has('authorization') && session) headers.set('authorization', `Bearer ${session.accessJwt}`);
        return this.fetch(new URL(url.replace(/^\//, ''), base), { ...init, headers });
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
    this.remember(stored.refreshJwt);
    this.session = stored;
  }

  private remember(refreshJwt: string): void {
    this.seen.add(refreshJwt);
    // A Set iterates in insertion order: the first one is the oldest.
    if (this.seen.size > SEEN_TOKENS) this.seen.delete(this.seen.values().next().value!);
  }

  /**
   * Runs one XRPC call with a valid session: logs in first if there is none; when the PDS says
   * the access token expired (or was refused), renews the session once and runs the call again.
   * `signal` (the attempt's) ends the waits for a shared login or refresh; `fn` passes it to its
   * own call.
   */
  async call<T>(fn: (agent: Agent) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const used = await this.ensure(signal);
    try {
      return await fn(this.agent);
    } catch (err) {
      if (!isSessionRejected(err)) throw err;
      await untilAborted(this.renew(used.accessJwt), signal);
      return await fn(this.agent);
    }
  }

  /** A session, logging in only when there is none; waits at most until `signal` fires. */
  ensure(signal?: AbortSignal): Promise<StoredSession> {
    if (this.renewing) return untilAborted(this.renewing, signal);
    if (this.session) return Promise.resolve(this.session);
    return untilAborted(
      this.singleFlight(() => this.login()),
      signal,
    );
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
      if (isXrpcError(err) && [400, 401].includes(xrpcStatus(err))) this.failedLogin = { at: this.now(), error: err };
      throw err;
    }
  }

  private set(session: StoredSession): StoredSession {
    this.session = session;
    this.remember(session.refreshJwt);
    return session;
  }
}

/** Identifies the login an in-memory session belongs to (the password only as a hash). */
export function sessionIdentity(config: BlueskyConfig, credentials: BlueskyCredentials): string {
  const passwordHash = createHash('sha256').update(credentials.appPassword).digest('base64url');
  return `${config.service}\n${config.identifier}\n${passwordHash}`;
}

export interface SessionCacheLimits {
  /** Accounts whose sessions are kept; past it the least recently used is dropped. */
  maxAccounts: number;
  /** A session unused for this long is dropped (a deleted account's, say). */
  idleMs: number;
}

/**
 * Sized for a process serving a few thousand Bluesky accounts at a steady pace; a dropped session
 * costs nothing but an object: the next attempt starts from the session stored in the account's
 * credentials (no login).
 */
export const DEFAULT_SESSION_CACHE: SessionCacheLimits = { maxAccounts: 2_000, idleMs: 30 * 60_000 };

/**
 * One in-memory session per account (see the file comment), in a bounded cache. An account is
 * never told to the connector when it is deleted or edited, and the cache may be in a process
 * that did not serve that request, so:
 * - a changed account (new password, identifier or service) is recognised by its identity and
 *   replaces the entry; a session another process stored is adopted by the entry;
 * - a deleted or idle account's entry (its tokens and app password in memory) goes after
 *   `idleMs` without use, and the cache never holds more than `maxAccounts` entries.
 */
export class BlueskySessions {
  private readonly byAccount: LRUCache<string, BlueskySession>;
  private lastPurge: number;

  constructor(
    private readonly fetch: FetchLike,
    private readonly limits: SessionCacheLimits = DEFAULT_SESSION_CACHE,
    private readonly now: () => number = Date.now,
  ) {
    // No autopurge timers: stale entries are swept on use (below), which a busy worker does often
    // and an idle one does not need.
    // ttlResolution 0: ask the clock every time (the default caches it for 1 ms of real time).
    this.byAccount = new LRUCache({ max: limits.maxAccounts, ttl: limits.idleMs, ttlResolution: 0, updateAgeOnGet: true, perf: { now } });
    this.lastPurge = now();
  }

  for(accountId: string, config: BlueskyConfig, credentials: BlueskyCredentials): BlueskySession {
    this.sweep();
    const identity = sessionIdentity(config, credentials);
    const existing = this.byAccount.get(accountId);
    if (existing && existing.identity === identity) {
      existing.adopt(credentials.session);
      return existing;
    }
    const created = new BlueskySession(identity, config, credentials.appPassword, credentials.session, this.fetch, this.now);
    this.byAccount.set(accountId, created);
    return created;
  }

  /** Accounts with a session in memory. */
  get size(): number {
    return this.byAccount.size;
  }

  /** Whether an account's session is in memory (without counting as a use). */
  has(accountId: string): boolean {
    return this.byAccount.has(accountId);
  }

  /** Logins and refreshes done in this process for an account (tests, metrics). */
  counters(accountId: string): SessionCounters | null {
    return this.byAccount.peek(accountId)?.counters ?? null;
  }

  private sweep(): void {
    const now = this.now();
    if (now - this.lastPurge < this.limits.idleMs / 4) return;
    this.lastPurge = now;
    this.byAccount.purgeStale();
  }
}
