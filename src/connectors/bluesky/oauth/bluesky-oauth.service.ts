import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Key, NodeOAuthClient, OAuthClientMetadataInput, OAuthSession } from '@atproto/oauth-client-node';
import { LRUCache } from 'lru-cache';
import { randomBytes, randomUUID } from 'node:crypto';
import { SecretBox } from '../../../common/crypto/secret-box';
import { guardedFetch } from '../../../common/net/guarded-fetch';
import type { FetchLike } from '../../../common/net/guarded-fetch';
import { HERALD_CONFIG, HeraldConfig } from '../../../config/config';
import { atprotoOAuth } from '../atproto';
import {
  Availability,
  clientMetadata,
  generateClientKey,
  keyIdFor,
  loadStoredKey,
  oauthAvailability,
  parseClientKey,
} from './bluesky-oauth-client';
import { BlueskyOAuthRepository } from './bluesky-oauth.repository';
import { leaseLock, sessionStore, stateStore } from './bluesky-oauth-stores';

/** PDS and authorization-server answers are small JSON documents. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** A Bluesky account the callback connected: what the account is stored with. */
export interface ConnectedBluesky {
  sessionId: string;
  did: string;
  handle: string;
  /** The PDS the tokens are for (the token set's audience). */
  service: string;
}

/** The OAuth part of a Bluesky account's credentials (sealed with the rest). */
export interface BlueskyOAuthCredentials {
  sessionId: string;
  did: string;
}

/** A person-facing refusal of the connect flow (the message never holds a secret). */
export class BlueskyConnectError extends Error {}

const TICKET_TTL_MS = 60_000;

/**
 * "Connect with Bluesky" through `@atproto/oauth-client-node` 0.5 (an ES module, loaded by Node's
 * require(esm)): a confidential client (bluesky-oauth-client.ts) whose PAR,
 * PKCE, DPoP, token exchange and refreshes are the library's. Herald gives it:
 *
 * - its key: BLUESKY_OAUTH_PRIVATE_KEY, or one generated once and kept in the database sealed
 *   with HERALD_SECRET_KEY, so every process that shares the database signs with it;
 * - its stores and its request lock, in PostgreSQL (bluesky-oauth-stores.ts);
 * - the outbound layer as its fetch (timeouts, bounded answers, the address guard), and plain
 *   http only where private addresses are allowed (HERALD_ALLOW_PRIVATE_URLS: tests, closed networks);
 * - BLUESKY_PLC_URL and BLUESKY_HANDLE_RESOLVER_URL for identity resolution (handle → DID → PDS →
 *   authorization server).
 *
 * The library keys sessions by DID; Herald keeps one session per connected account, so each
 * account gets a client of its own over the same key, metadata and stores (kept in a bounded
 * cache: a client is only a set of resolvers around the stored session).
 */
@Injectable()
export class BlueskyOAuth {
  private readonly logger = new Logger('BlueskyOAuth');
  private readonly fetch: FetchLike;
  private readonly metadata: OAuthClientMetadataInput;
  private key: Promise<Key> | null = null;
  private readonly clients = new LRUCache<string, NodeOAuthClient>({ max: 2_000, ttl: 30 * 60_000, updateAgeOnGet: true });
  /** Connections handed from the callback to the connector's prepareAccount, in this process only. */
  private readonly tickets = new Map<
    string,
    { connected: ConnectedBluesky; expiresAt: number; redeemed: boolean; replaces: BlueskyOAuthCredentials | null }
  >();

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly rows: BlueskyOAuthRepository,
    private readonly box: SecretBox,
  ) {
    this.fetch = guardedFetch({
      connectTimeoutMs: config.http.connectTimeoutMs,
      totalTimeoutMs: config.http.totalTimeoutMs,
      maxBodyBytes: MAX_ANSWER_BYTES,
      allowPrivate: config.allowPrivateUrls,
    });
    this.metadata = clientMetadata(config.publicUrl, config.bluesky.oauthScope);
  }

  get availability(): Availability {
    return oauthAvailability(this.config.publicUrl);
  }

  get enabled(): boolean {
    return this.availability.ok;
  }

  get scope(): string {
    return this.config.bluesky.oauthScope;
  }

  /** The client metadata document served at the client_id URL. */
  clientMetadata(): OAuthClientMetadataInput {
    return this.metadata;
  }

  /** The public half of the client key, served at jwks_uri. */
  async jwks(): Promise<unknown> {
    return new (atprotoOAuth().Keyset)([await this.clientKey()]).publicJwks;
  }

  private clientKey(): Promise<Key> {
    this.key ??= this.loadKey().catch((err: unknown) => {
      this.key = null; // a database hiccup at the first use must not stick
      throw err;
    });
    return this.key;
  }

  private async loadKey(): Promise<Key> {
    if (this.config.bluesky.oauthPrivateKey !== null) return parseClientKey(this.config.bluesky.oauthPrivateKey);
    const candidate = await generateClientKey();
    const stored = await this.rows.keyOrInsert({
      kid: candidate.kid ?? keyIdFor(candidate.privateJwk ?? {}),
      sealedJwk: this.box.encryptJson(candidate.privateJwk, 'bluesky-oauth-key'),
    });
    return loadStoredKey(JSON.stringify(this.box.decryptJson(stored.sealedJwk, 'bluesky-oauth-key')), stored.kid);
  }

  /**
   * A client whose session store is the row `sessionId`. The lease is longer than a refresh can
   * last: a refresh is at most a few requests (token endpoint, a DPoP nonce retry, the server's
   * metadata), each bounded by HTTP_TOTAL_TIMEOUT_MS.
   */
  private async client(sessionId: string): Promise<NodeOAuthClient> {
    const cached = this.clients.get(sessionId);
    if (cached) return cached;
    const leaseMs = 4 * this.config.http.totalTimeoutMs + 10_000;
    const client = new (atprotoOAuth().NodeOAuthClient)({
      clientMetadata: this.metadata,
      keyset: [await this.clientKey()],
      stateStore: stateStore(this.rows, this.box),
      sessionStore: sessionStore(this.rows, this.box, sessionId),
      requestLock: leaseLock(this.rows, `bluesky-oauth:${sessionId}`, { leaseMs, waitMs: leaseMs }),
      fetch: this.fetch,
      allowHttp: this.config.allowPrivateUrls,
      plcDirectoryUrl: this.config.bluesky.plcUrl,
      ...(this.config.bluesky.handleResolverUrl !== null ? { handleResolver: this.config.bluesky.handleResolverUrl } : {}),
      onSessionDeleted: (did, cause) => {
        const why = cause instanceof Error ? cause.message : 'no reason given';
        this.logger.warn(`the Bluesky OAuth session of ${did} ended (${why.slice(0, 200)}); its account has to be reconnected`);
      },
    });
    this.clients.set(sessionId, client);
    return client;
  }

  /**
   * Resolves `identifier` (handle or DID) to its PDS and authorization server, pushes the
   * authorization request (PAR) and answers the URL to send the browser to. `appState` comes
   * back from `complete` (Herald's own state, bound to the page session and the browser).
   */
  async authorize(identifier: string, appState: string, signal?: AbortSignal): Promise<URL> {
    // No session is touched while a flow starts: any row id does.
    const client = await this.client(randomUUID());
    try {
      return await client.authorize(identifier, { state: appState, scope: this.scope, ...(signal ? { signal } : {}) });
    } catch (err) {
      throw new BlueskyConnectError(`Herald could not start the Bluesky sign-in for “${identifier}”: ${describe(err)}`);
    }
  }

  /**
   * Herald's own state of a pending flow, read without using the flow up: the callback checks
   * the page session and the browser before any code is exchanged.
   */
  async pendingAppState(state: string): Promise<string | null> {
    if (state === '' || state.length > 500) return null;
    const data = await stateStore(this.rows, this.box).get(state);
    return typeof data?.appState === 'string' ? data.appState : null;
  }

  /**
   * Finishes a flow: exchanges the code (the library checks the state, the issuer and the
   * account), stores the session under a new row, and answers who connected.
   */
  async complete(params: URLSearchParams): Promise<ConnectedBluesky> {
    const sessionId = randomUUID();
    const client = await this.client(sessionId);
    let session: OAuthSession;
    try {
      ({ session } = await client.callback(params));
    } catch (err) {
      this.clients.delete(sessionId);
      if (err instanceof atprotoOAuth().OAuthCallbackError && params.get('error') === 'access_denied') {
        throw new BlueskyConnectError('The Bluesky connection was cancelled at Bluesky; nothing was changed.');
      }
      throw new BlueskyConnectError(`Bluesky did not complete the connection (${describe(err)}). Nothing was changed.`);
    }
    try {
      const info = await session.getTokenInfo(false);
      const identity = await client.identityResolver.resolve(session.did);
      return { sessionId, did: session.did, handle: identity.handle, service: info.aud.replace(/\/+$/, '') };
    } catch (err) {
      await this.forget({ sessionId, did: session.did });
      throw new BlueskyConnectError(`Bluesky connected, but ${session.did} could not be resolved (${describe(err)}). Nothing was changed.`);
    }
  }

  /**
   * Hands a connection to prepareAccount (same process, same request): a one-use, short-lived
   * ticket. The caller ends it with `settle` once the account is saved, or `abandon` if saving
   * failed (the new session is then revoked and deleted).
   */
  issueTicket(connected: ConnectedBluesky): string {
    const now = Date.now();
    for (const [ticket, entry] of this.tickets) if (entry.expiresAt < now) this.tickets.delete(ticket);
    const ticket = randomBytes(32).toString('base64url');
    this.tickets.set(ticket, { connected, expiresAt: now + TICKET_TTL_MS, redeemed: false, replaces: null });
    return ticket;
  }

  /**
   * The connection of a ticket, once. `previous`: the OAuth session the account had, which the
   * new one replaces when the account is saved (see `settle`).
   */
  redeemTicket(ticket: string, previous: BlueskyOAuthCredentials | null): ConnectedBluesky | null {
    const entry = this.tickets.get(ticket);
    if (!entry || entry.redeemed || entry.expiresAt < Date.now()) return null;
    entry.redeemed = true;
    entry.replaces = previous !== null && previous.sessionId !== entry.connected.sessionId ? previous : null;
    return entry.connected;
  }

  /** The account is saved with the ticket's session: the session it replaced is ended. */
  async settle(ticket: string): Promise<void> {
    const entry = this.tickets.get(ticket);
    this.tickets.delete(ticket);
    if (entry?.replaces) await this.forget(entry.replaces);
  }

  /** Saving the account failed: its new session is ended, nothing else changes. */
  async abandon(ticket: string): Promise<void> {
    const entry = this.tickets.get(ticket);
    this.tickets.delete(ticket);
    if (entry) await this.forget(entry.connected);
  }

  /** Ends a session: revokes its tokens at the server (best effort) and deletes its row. */
  async forget(credentials: BlueskyOAuthCredentials): Promise<void> {
    try {
      // Revoking is worth a try only while the session row is there.
      const client = await this.client(credentials.sessionId);
      await client.revoke(credentials.did);
    } catch (err) {
      this.logger.warn(`could not revoke a Bluesky OAuth session of ${credentials.did}: ${describe(err)}`);
    } finally {
      this.clients.delete(credentials.sessionId);
      await this.rows.deleteSession(credentials.sessionId);
    }
  }

  /**
   * The session of a connected account, refreshed first when its access token has (nearly)
   * expired; throws TokenRefreshError & co. when the session is gone for good.
   */
  async restore(credentials: BlueskyOAuthCredentials): Promise<OAuthSession> {
    const client = await this.client(credentials.sessionId);
    return client.restore(credentials.did, 'auto');
  }
}

/** An error as one line for a person: its message, never a token (the library puts none in them). */
export function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s+/g, ' ').slice(0, 300);
}
