import { Injectable } from '@nestjs/common';
import { AuthorizeStep, ConnectAccount, OAuthConnect, OAuthConnectError, OAuthGrant } from '../../oauth-connect.interface';
import { FLOW_TTL_MS } from './bluesky-oauth-stores';
import { BlueskyConnectError, BlueskyOAuth, ConnectedBluesky } from './bluesky-oauth.service';

/** A handle as people write it ("@alice.bsky.social"), or a DID. */
export function normaliseIdentifier(raw: string): string {
  const trimmed = raw.trim().replace(/^@/, '');
  // Handles are case-insensitive; a DID is not.
  return trimmed.startsWith('did:') ? trimmed : trimmed.toLowerCase();
}

/**
 * Bluesky's side of "Connect with Bluesky" and "Reconnect with Bluesky": the flow of the Bluesky
 * OAuth client (BlueskyOAuth). Herald's state travels through the library as its `appState`, so
 * an answer's Herald state is read from the library's pending flow before the code is exchanged.
 * The grant is a one-use ticket of this process that the connector's prepareAccount redeems for
 * the new session; settling it ends the session it replaced, abandoning it ends the new one.
 */
@Injectable()
export class BlueskyOAuthConnect implements OAuthConnect {
  readonly provider = 'bluesky' as const;
  readonly label = 'Bluesky';
  readonly flowTtlMs = FLOW_TTL_MS;

  constructor(private readonly oauth: BlueskyOAuth) {}

  get scope(): string {
    return this.oauth.scope;
  }

  availability(): { ok: true } | { ok: false; reason: string } {
    return this.oauth.availability;
  }

  /** The handle or DID names the PDS, and so the authorization server. */
  signInHint(from: { identifier: string } | { account: ConnectAccount }): string {
    if ('account' in from) {
      const c = from.account.config;
      // The DID when Herald knows it: a handle may have changed since.
      const identifier = typeof c.did === 'string' ? c.did : typeof c.identifier === 'string' ? c.identifier : '';
      if (identifier === '')
        throw new OAuthConnectError(`${from.account.name} has no Bluesky handle or DID to sign in with; connect it again`);
      return identifier;
    }
    const identifier = normaliseIdentifier(from.identifier);
    if (identifier === '' || identifier.length > 253)
      throw new OAuthConnectError('Give your Bluesky handle (e.g. alice.bsky.social) or DID');
    return identifier;
  }

  /** Resolves the handle or DID to its PDS and authorization server and pushes the request (PAR). */
  async authorize(state: string, hint: string | null): Promise<AuthorizeStep> {
    if (hint === null) throw new OAuthConnectError('Give your Bluesky handle (e.g. alice.bsky.social) or DID');
    try {
      return { url: await this.oauth.authorize(hint, state) };
    } catch (err) {
      if (err instanceof BlueskyConnectError) throw new OAuthConnectError(err.message);
      throw err;
    }
  }

  stateOf(params: URLSearchParams): Promise<string | null> {
    return this.oauth.pendingAppState(params.get('state') ?? '');
  }

  async complete(params: URLSearchParams): Promise<OAuthGrant> {
    let connected: ConnectedBluesky;
    try {
      connected = await this.oauth.complete(params);
    } catch (err) {
      if (err instanceof BlueskyConnectError) throw new OAuthConnectError(err.message, 'platform');
      throw err;
    }
    const ticket = this.oauth.issueTicket(connected);
    return {
      defaultName: `@${connected.handle}`,
      postingAs: `@${connected.handle}`,
      newAccountConfig: { oauthTicket: ticket },
      reconnectConfig: (account: ConnectAccount) => {
        const expected = typeof account.config.did === 'string' ? account.config.did : null;
        if (expected !== null && expected !== connected.did) {
          throw new OAuthConnectError(
            `You signed in to Bluesky as @${connected.handle} (${connected.did}), but “${account.name}” posts as ${expected}. Sign in as that account (or connect a new one). Nothing was changed.`,
          );
        }
        return { oauthTicket: ticket };
      },
      settle: () => this.oauth.settle(ticket),
      abandon: () => this.oauth.abandon(ticket),
    };
  }
}
