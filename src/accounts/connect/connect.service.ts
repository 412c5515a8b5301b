import { Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import type { AuthContext } from '../../access/auth-context';
import { allows } from '../../access/roles';
import { invalidInput } from '../../common/errors';
import { createValidationPipe } from '../../common/validation';
import type { Provider } from '../../connectors/connector.interface';
import { OAuthConnectError, OAuthGrant } from '../../connectors/oauth-connect.interface';
import { OAuthConnectRegistry } from '../../connectors/oauth-connect.registry';
import type { AccountView } from '../account.types';
import { CreateAccountDto, UpdateAccountDto } from '../accounts.dto';
import { AccountsService } from '../accounts.service';
import { ConnectStatesRepository } from './connect-states.repository';

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

const pipe = createValidationPipe();
/** The API's own DTO rules (the global pipe's) on what a flow built: a name, a config. Throws the API's 400. */
async function validated<T>(metatype: new () => T, value: Record<string, unknown>): Promise<T> {
  return (await pipe.transform(value, { type: 'body', metatype })) as T;
}

/** The session a flow is bound to (a page session: its id and who it is). */
export interface ConnectSession {
  id: string;
  auth: AuthContext;
}

/**
 * A new account (its name, and where the platform needs it who or where to sign in: the Bluesky
 * handle or DID, the Mastodon instance), or the account a reconnect gives new credentials. Without
 * a name, the platform's (the member's name, the display name) when the flow completes.
 */
export type ConnectTarget = { accountId: string } | { name?: string; identifier?: string };

/** Where to send the browser, and the value the browser keeps (a cookie) until the callback, for `ttlMs`. */
export interface ConnectStart {
  url: string;
  /** The authorization server's host, for the person ("Continue to bsky.social"). */
  host: string;
  browserToken: string;
  ttlMs: number;
}

/** How a callback ended. `session`: the flow's session, when the answer got that far. */
export type ConnectOutcome<S extends ConnectSession> =
  | { ok: true; kind: 'connected'; account: AccountView; postingAs: string; session: S; stateUsed: true }
  /** `resumed`: the account's paused posts that went back to the queue. */
  | { ok: true; kind: 'reconnected'; account: AccountView; resumed: number; session: S; stateUsed: true }
  | {
      ok: false;
      /** The answer's HTTP status: 400 refused, 401 the session ended, 403 the role no longer allows it, 502 the platform failed. */
      status: number;
      message: string;
      session: S | null;
      /** The state matched a pending flow (now used up): its browser cookie has served. */
      stateUsed: boolean;
    };

/**
 * "Connect with …" and "Reconnect with …" for every platform that connects with OAuth (the
 * platform's side: OAuthConnect in src/connectors/). What they share lives here:
 *
 * - Herald's own `state`, 256 random bits, stored hashed in account_connect_states with the
 *   session that started the flow and the hash of a second random value the browser keeps (a
 *   cookie); usable once, for the platform's flow time (15 minutes).
 * - At the callback, the state and the browser are checked, then the session is found again and
 *   its role re-checked (it may have been lowered while the person was at the platform), all
 *   before the platform exchanges the code: a forged link, an answer that reached another
 *   browser or a role that no longer allows it never turns into tokens.
 * - The account is created or reconnected through AccountsService, so the connector validates
 *   and stores the grant like API-given credentials, with the audit trail.
 *
 * Every refusal changes nothing. The page reads the request, sets the cookie, and says the
 * outcome (src/settings/connect/).
 */
@Injectable()
export class ConnectService {
  constructor(
    private readonly platforms: OAuthConnectRegistry,
    private readonly states: ConnectStatesRepository,
    private readonly accounts: AccountsService,
  ) {}

  /** Whether "Connect with …" works for `provider` on this Herald (configured, reachable). */
  available(provider: Provider): boolean {
    return this.platforms.find(provider)?.availability().ok ?? false;
  }

  /** Starts a connect (a name) or a reconnect (an account id) in `session`'s name. Throws a person's 400 for every refusal. */
  async start(session: ConnectSession, provider: Provider, target: ConnectTarget): Promise<ConnectStart> {
    const platform = this.platforms.require(provider);
    const availability = platform.availability();
    if (!availability.ok) throw invalidInput(availability.reason);
    try {
      let accountId: string | null = null;
      let accountName: string | null = null;
      let hint: string | null;
      if ('accountId' in target) {
        const account = await this.accounts.get(session.auth.workspaceId, target.accountId);
        if (account.provider !== provider) throw invalidInput(`${account.name} is not a ${platform.label} account`);
        accountId = account.id;
        hint = platform.signInHint({ account });
      } else {
        // The API's own rules for a name, before the person goes to the platform and back.
        if (target.name !== undefined && target.name !== '') {
          await validated(CreateAccountDto, { provider, name: target.name, config: {} });
          accountName = target.name;
        }
        hint = platform.signInHint({ identifier: target.identifier ?? '' });
      }
      const state = randomBytes(32).toString('base64url');
      const browserToken = randomBytes(32).toString('base64url');
      const { url, flow } = await platform.authorize(state, hint);
      await this.states.insert({
        stateHash: sha256(state),
        sessionId: session.id,
        browserHash: sha256(browserToken),
        accountId,
        accountName,
        requestedScopes: platform.scope,
        flow: flow ?? null,
        expiresAt: new Date(Date.now() + platform.flowTtlMs),
      });
      return { url: url.href, host: url.host, browserToken, ttlMs: platform.flowTtlMs };
    } catch (err) {
      if (err instanceof OAuthConnectError) throw invalidInput(err.message);
      throw err;
    }
  }

  /**
   * The platform's redirect back (`params`: its query), from the browser holding `browserToken`.
   * `sessionById` finds the flow's session again (the redirect is a cross-site navigation: the
   * session's own cookie does not come with it).
   */
  async callback<S extends ConnectSession>(
    provider: Provider,
    params: URLSearchParams,
    browserToken: string | undefined,
    sessionById: (id: string) => Promise<S | null>,
  ): Promise<ConnectOutcome<S>> {
    const platform = this.platforms.require(provider);
    const label = platform.label;
    let stateUsed = false;
    const refuse = (message: string, session: S | null = null, status: 400 | 401 | 403 | 502 = 400): ConnectOutcome<S> => ({
      ok: false,
      status,
      message,
      session,
      stateUsed,
    });
    let state: string | null;
    try {
      state = await platform.stateOf(params);
    } catch (err) {
      if (err instanceof OAuthConnectError) return refuse(err.message);
      throw err;
    }
    // The state is used up only by the browser that started the flow (its cookie): another
    // browser's callback leaves the flow to its owner.
    const browserHash = browserToken && browserToken.length <= 200 ? sha256(browserToken) : null;
    const row = state === null || browserHash === null ? null : await this.states.consume(sha256(state), browserHash);
    stateUsed = row !== null;
    if (!row) {
      if (state !== null && (await this.states.pending(sha256(state)))) {
        return refuse(`This ${label} answer reached a different browser than the one that started the connection. Nothing was changed.`);
      }
      return refuse(
        `This ${label} answer does not match a connection started here (unknown, expired or already used). Nothing was changed; start again from the accounts page.`,
      );
    }
    const session = await sessionById(row.sessionId);
    if (!session) return refuse(`Your session ended while you were at ${label}. Log in and start again; nothing was changed.`, null, 401);
    // The role that allowed the start may have been lowered since (the page checks it per
    // request; this answer comes without the page's guard). Checked before the code is
    // exchanged, so a refusal leaves nothing at the platform either.
    if (!allows(session.auth, 'edit'))
      return refuse('Your role does not allow connecting accounts any more. Nothing was changed.', session, 403);

    let grant: OAuthGrant;
    try {
      grant = await platform.complete(params, row.requestedScopes, row.flow);
    } catch (err) {
      if (err instanceof OAuthConnectError) return refuse(err.message, session, err.kind === 'platform' ? 502 : 400);
      throw err;
    }
    try {
      if (row.accountId === null) {
        const created = await this.accounts.create(
          session.auth,
          await validated(CreateAccountDto, { provider, name: row.accountName ?? grant.defaultName, config: grant.newAccountConfig }),
        );
        await grant.settle();
        return { ok: true, kind: 'connected', account: created, postingAs: grant.postingAs, session, stateUsed: true };
      }
      const account = await this.accounts.get(session.auth.workspaceId, row.accountId);
      const config = grant.reconnectConfig(account);
      const { account: updated, resumed } = await this.accounts.updateCountingResumed(
        session.auth,
        account.id,
        await validated(UpdateAccountDto, { config }),
      );
      await grant.settle();
      return { ok: true, kind: 'reconnected', account: updated, resumed, session, stateUsed: true };
    } catch (err) {
      await grant.abandon();
      if (err instanceof OAuthConnectError) return refuse(err.message, session);
      throw err;
    }
  }
}
