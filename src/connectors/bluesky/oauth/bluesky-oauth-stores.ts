import type { NodeSavedSession, NodeSavedSessionStore, NodeSavedState, NodeSavedStateStore, RuntimeLock } from '@atproto/oauth-client-node';
import { createHash, randomUUID } from 'node:crypto';
import type { SecretBox } from '../../../common/crypto/secret-box';
import { atprotoOAuth } from '../atproto';
import type { BlueskyOAuthRepository } from './bluesky-oauth.repository';

/**
 * The stores `@atproto/oauth-client-node` asks for, in PostgreSQL (BlueskyOAuthRepository),
 * every value sealed with HERALD_SECRET_KEY (SecretBox: AES-256-GCM) and bound to its row:
 *
 * - pending flows, keyed by the SHA-256 of the library's `state` (the value itself travels in
 *   the browser's URL and is never stored): the flow's DPoP key, its PKCE verifier, the issuer;
 * - sessions, one row per connected account (`sessionId`, named in the account's credentials):
 *   the library keys sessions by DID, so a store is bound to one row, and a DID that is not the
 *   row's reads as "no session" (two workspaces may connect the same Bluesky account: each has a
 *   session of its own);
 * - the request lock: one token refresh at a time per session, across every Herald process.
 */

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** How long a person has to sign in and consent at the authorization server. */
export const FLOW_TTL_MS = 15 * 60_000;

type StateRows = Pick<BlueskyOAuthRepository, 'putState' | 'getState' | 'deleteState'>;
type SessionRows = Pick<BlueskyOAuthRepository, 'putSession' | 'getSession' | 'deleteSession'>;
type LockRows = Pick<BlueskyOAuthRepository, 'tryLock' | 'unlock'>;

export function stateStore(rows: StateRows, box: SecretBox, ttlMs = FLOW_TTL_MS): NodeSavedStateStore {
  const context = (hash: Buffer) => `bluesky-oauth-state:${hash.toString('hex')}`;
  return {
    async get(key) {
      const hash = sha256(key);
      const sealed = await rows.getState(hash);
      return sealed === null ? undefined : box.decryptJson<NodeSavedState>(sealed, context(hash));
    },
    async set(key, value) {
      const hash = sha256(key);
      await rows.putState(hash, box.encryptJson(value, context(hash)), ttlMs);
    },
    async del(key) {
      await rows.deleteState(sha256(key));
    },
  };
}

export function sessionContext(sessionId: string): string {
  return `bluesky-oauth-session:${sessionId}`;
}

/** The session store of one connected account (one row of bluesky_oauth_sessions). */
export function sessionStore(rows: SessionRows, box: SecretBox, sessionId: string): NodeSavedSessionStore {
  return {
    async get(did) {
      const row = await rows.getSession(sessionId);
      if (row === null || row.did !== did) return undefined;
      return box.decryptJson<NodeSavedSession>(row.sealed, sessionContext(sessionId));
    },
    async set(did, value) {
      await rows.putSession(sessionId, did, box.encryptJson(value, sessionContext(sessionId)));
    },
    async del() {
      await rows.deleteSession(sessionId);
    },
  };
}

/** The lock could not be had in time (another process holds it and does not give it back). */
export class RefreshLockTimeout extends Error {
  constructor(name: string, waitedMs: number) {
    super(`another Herald process has been refreshing this Bluesky session for ${Math.round(waitedMs / 1000)} s (${name})`);
    this.name = 'RefreshLockTimeout';
  }
}

export interface LeaseLockOptions {
  /** How long a holder keeps the lock at most (longer than any refresh: see BlueskyOAuth). */
  leaseMs: number;
  /** How long a waiter waits before giving up (the attempt is then retried). */
  waitMs: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The library's `requestLock` for one session: `fn` (a token refresh and its store write) runs
 * while this process holds the lease `<scope>:<name>` in bluesky_oauth_locks. Waiters in this
 * process queue behind each other first (the library's in-process lock), so only one of them at
 * a time polls the table; a waiter polls with a growing pause (25 ms to 250 ms).
 *
 * A lease and not a PostgreSQL advisory lock: a session advisory lock would hold a pooled
 * connection for the whole refresh (HTTP calls included) and does not hold at all behind a pooler
 * in transaction mode, and a transaction-scoped one would hold a transaction open across HTTP
 * calls. The lease is longer than a refresh can last (every request of it is bounded by
 * HTTP_TOTAL_TIMEOUT_MS), so a live holder never loses it; a holder that died frees it when it ends.
 */
export function leaseLock(rows: LockRows, scope: string, options: LeaseLockOptions): RuntimeLock {
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const dbLock = async <T>(name: string, fn: () => T | PromiseLike<T>): Promise<T> => {
    const holder = randomUUID();
    const started = now();
    let pause = 25;
    while (!(await rows.tryLock(name, holder, options.leaseMs))) {
      const waited = now() - started;
      if (waited >= options.waitMs) throw new RefreshLockTimeout(name, waited);
      await sleep(Math.min(pause, options.waitMs - waited));
      pause = Math.min(pause * 2, 250);
    }
    try {
      return await fn();
    } finally {
      // A failed release only delays the next holder until the lease ends.
      await rows.unlock(name, holder).catch(() => undefined);
    }
  };
  return <T>(name: string, fn: () => T | PromiseLike<T>) => {
    const scoped = `${scope}:${name}`.slice(0, 300);
    return atprotoOAuth().requestLocalLock(scoped, () => dbLock(scoped, fn));
  };
}
