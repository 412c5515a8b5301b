import type { Provider } from './connector.interface';

/**
 * A platform's side of "Connect with …" (an OAuth authorization code flow), as the accounts
 * module's ConnectService drives it (src/accounts/connect/). The service keeps what every
 * platform shares: Herald's own `state` (bound to the session and the browser that started the
 * flow, usable once), the role re-check at the callback, and saving the account through
 * AccountsService. A platform says where to send the browser, which Herald state an answer
 * carries, and what the answer grants; its HTTP and its library stay in its own folder
 * (linkedin/oauth/, bluesky/oauth/).
 */
export interface OAuthConnect {
  readonly provider: Provider;
  /** The platform's name in messages for a person ("LinkedIn", "Bluesky"). */
  readonly label: string;
  /** The scopes a flow asks for, space-separated: stored with the state, compared with the grant. */
  readonly scope: string;
  /** How long a person has to sign in and consent at the platform. */
  readonly flowTtlMs: number;

  /** Whether this Herald can run the flow at all (configured, reachable from the platform), and if not, why. */
  availability(): { ok: true } | { ok: false; reason: string };

  /**
   * Who to sign in as, when the platform needs to know before the flow (Bluesky: the handle or
   * DID, which names the authorization server): from the connect form, or from the account a
   * reconnect replaces the credentials of. null when the platform asks the person itself.
   * Throws OAuthConnectError for a person.
   */
  signInHint(from: { identifier: string } | { account: ConnectAccount }): string | null;

  /**
   * The URL to send the browser to; `state` comes back with the answer (see `stateOf`). Throws
   * OAuthConnectError for a person.
   */
  authorize(state: string, hint: string | null): Promise<AuthorizeStep>;

  /**
   * The Herald state an answer to the callback URL carries, read without using anything up (the
   * service checks the session and the browser before any code is exchanged); null when it
   * carries none this platform issued. Throws OAuthConnectError to refuse the answer outright.
   */
  stateOf(params: URLSearchParams): Promise<string | null>;

  /**
   * Finishes the flow whose state matched: exchanges the code, checks the grant against
   * `requestedScopes`, and answers what the account is saved with. `flow` is what `authorize`
   * asked to be kept for this flow (null if nothing). Throws OAuthConnectError for every refusal
   * (nothing is kept at the platform then).
   */
  complete(params: URLSearchParams, requestedScopes: string, flow: string | null): Promise<OAuthGrant>;
}

/** Where a flow sends the browser, and what the platform needs back at the callback. */
export interface AuthorizeStep {
  url: URL;
  /**
   * Kept with Herald's state until the callback and handed back to `complete` (Mastodon: which
   * instance, which registration, whether PKCE was used: its callback names none of them).
   * Never a secret: it is stored as it is. At most 4096 characters.
   */
  flow?: string;
}

/** An account as a reconnect finds it: what a platform compares the sign-in with. */
export interface ConnectAccount {
  name: string;
  config: Record<string, unknown>;
}

/** What a completed flow grants: the account's `config` (as POST/PATCH /v1/accounts take it) and who signed in. */
export interface OAuthGrant {
  /** A new account's name when the person gave none (the member's name, the handle). */
  readonly defaultName: string;
  /** Who the account posts as, for the person's message ("urn:li:person:…", "@alice.bsky.social"). */
  readonly postingAs: string;
  /** The `config` of a new account. */
  readonly newAccountConfig: Record<string, unknown>;
  /**
   * The `config` that gives `account` the new credentials. Throws OAuthConnectError when someone
   * else signed in than the one the account posts as.
   */
  reconnectConfig(account: ConnectAccount): Record<string, unknown>;
  /** The account was saved with this grant. */
  settle(): Promise<void>;
  /** It was not (refused or failed): whatever the grant holds at the platform is let go. */
  abandon(): Promise<void>;
}

/**
 * A refusal of a connect flow, worded for a person (never a token, a code or a secret).
 * `platform`: the platform failed or refused to finish (the page answers 502); `refused`: the
 * request or the answer does not fit what was asked (400).
 */
export class OAuthConnectError extends Error {
  constructor(
    message: string,
    readonly kind: 'refused' | 'platform' = 'refused',
  ) {
    super(message);
  }
}

/** The platforms that connect with OAuth (assembled in connectors.module.ts). */
export const OAUTH_CONNECTS = Symbol('OAUTH_CONNECTS');
