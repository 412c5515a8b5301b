import { Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { allows } from '../../access/roles';
import { CreateAccountDto, UpdateAccountDto } from '../../accounts/accounts.dto';
import { AccountsService } from '../../accounts/accounts.service';
import { invalidInput } from '../../common/errors';
import { BlueskyConnectError, BlueskyOAuth, ConnectedBluesky } from '../../connectors/bluesky/oauth/bluesky-oauth.service';
import { FLOW_TTL_MS } from '../../connectors/bluesky/oauth/bluesky-oauth-stores';
import { JobsService } from '../../jobs/jobs.service';
import { asDto } from '../form-validation';
import { reconnectedFlash } from '../linkedin/linkedin-oauth.service';
import { OAuthStatesRepository } from '../linkedin/oauth-states.repository';
import { PageSession, SessionsService } from '../session/sessions.service';

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** How the callback ended: the message to show and, when the flow got that far, its session. */
export interface BlueskyCallbackOutcome {
  ok: boolean;
  status: number;
  message: string;
  session: PageSession | null;
  /** The state matched a pending flow (now used up): its browser cookie has served. */
  stateUsed: boolean;
}

/** A handle as people write it ("@alice.bsky.social"), or a DID. */
export function normaliseIdentifier(raw: string): string {
  const trimmed = raw.trim().replace(/^@/, '');
  // Handles are case-insensitive; a DID is not.
  return trimmed.startsWith('did:') ? trimmed : trimmed.toLowerCase();
}

/**
 * "Connect with Bluesky" and "Reconnect with Bluesky": the OAuth flow of the Bluesky connector's
 * client (BlueskyOAuth), started from the page and bound to it as "Connect with LinkedIn" is:
 * Herald's own state (256 random bits, passed through the library as its `appState`) is stored
 * hashed in settings_oauth_states with the page session that started the flow and the hash of a
 * second random value kept in a cookie of that browser; it is usable once and for 15 minutes.
 * The callback checks both before the library exchanges the code, so an answer that reached
 * another browser, or a forged link, never turns into tokens.
 *
 * The account is created or reconnected through AccountsService like any other: the connector
 * receives the new session as a one-use ticket of this process.
 */
@Injectable()
export class BlueskyConnectService {
  constructor(
    private readonly oauth: BlueskyOAuth,
    private readonly states: OAuthStatesRepository,
    private readonly sessions: SessionsService,
    private readonly accounts: AccountsService,
    private readonly jobs: JobsService,
  ) {}

  get enabled(): boolean {
    return this.oauth.enabled;
  }

  /**
   * Starts a connect (a name and a handle) or a reconnect (an account id): resolves the handle
   * or DID to its PDS and authorization server, pushes the request, and answers where to send
   * the browser and the browser's cookie value.
   */
  async start(
    session: PageSession,
    target: { accountId: string } | { name: string; identifier: string },
  ): Promise<{ url: string; host: string; browserToken: string }> {
    const availability = this.oauth.availability;
    if (!availability.ok) throw invalidInput(availability.reason);
    let accountId: string | null = null;
    let accountName: string | null = null;
    let identifier: string;
    if ('accountId' in target) {
      const account = await this.accounts.get(session.auth.workspaceId, target.accountId);
      if (account.provider !== 'bluesky') throw invalidInput(`${account.name} is not a Bluesky account`);
      accountId = account.id;
      const c = account.config;
      // The DID when Herald knows it: a handle may have changed since.
      identifier = typeof c.did === 'string' ? c.did : typeof c.identifier === 'string' ? c.identifier : '';
      if (identifier === '') throw invalidInput(`${account.name} has no Bluesky handle or DID to sign in with; connect it again`);
    } else {
      await asDto(CreateAccountDto, { provider: 'bluesky', name: target.name, config: {} });
      accountName = target.name;
      identifier = normaliseIdentifier(target.identifier);
      if (identifier === '' || identifier.length > 253) throw invalidInput('Give your Bluesky handle (e.g. alice.bsky.social) or DID');
    }
    const appState = randomBytes(32).toString('base64url');
    const browserToken = randomBytes(32).toString('base64url');
    let url: URL;
    try {
      url = await this.oauth.authorize(identifier, appState);
    } catch (err) {
      if (err instanceof BlueskyConnectError) throw invalidInput(err.message);
      throw err;
    }
    await this.states.insert({
      stateHash: sha256(appState),
      sessionId: session.id,
      browserHash: sha256(browserToken),
      accountId,
      accountName,
      requestedScopes: this.oauth.scope,
      expiresAt: new Date(Date.now() + FLOW_TTL_MS),
    });
    return { url: url.href, host: url.host, browserToken };
  }

  /** The authorization server's redirect back. Every refusal changes nothing (and uses the state up). */
  async callback(params: URLSearchParams, browserToken: string | undefined): Promise<BlueskyCallbackOutcome> {
    let stateUsed = false;
    const refuse = (message: string, session: PageSession | null = null, status = 400): BlueskyCallbackOutcome => ({
      ok: false,
      status,
      message,
      session,
      stateUsed,
    });
    const appState = await this.oauth.pendingAppState(params.get('state') ?? '');
    // Used up only together with the browser check (as for LinkedIn): another browser's
    // callback leaves the flow to the browser that started it.
    const browserHash = browserToken && browserToken.length <= 200 ? sha256(browserToken) : null;
    const row = appState === null || browserHash === null ? null : await this.states.consume(sha256(appState), browserHash);
    stateUsed = row !== null;
    if (!row) {
      if (appState !== null && (await this.states.pending(sha256(appState)))) {
        return refuse('This Bluesky answer reached a different browser than the one that started the connection. Nothing was changed.');
      }
      return refuse(
        'This Bluesky answer does not match a connection started here (unknown, expired or already used). Nothing was changed; start again from the accounts page.',
      );
    }
    const session = await this.sessions.resolveById(row.sessionId);
    if (!session) return refuse('Your session ended while you were at Bluesky. Log in and start again; nothing was changed.', null, 401);
    // The role that allowed the start may have been lowered since (the page checks it per
    // request; this answer comes without the page's guard). Checked before the code is exchanged,
    // so a refusal leaves no session at the PDS either.
    if (!allows(session.auth, 'edit'))
      return refuse('Your role does not allow connecting accounts any more. Nothing was changed.', session, 403);

    let connected: ConnectedBluesky;
    try {
      connected = await this.oauth.complete(params);
    } catch (err) {
      if (err instanceof BlueskyConnectError) return refuse(err.message, session, 502);
      throw err;
    }
    const ticket = this.oauth.issueTicket(connected);
    const workspaceId = session.auth.workspaceId;
    try {
      if (row.accountId === null) {
        const created = await this.accounts.create(
          session.auth,
          await asDto(CreateAccountDto, {
            provider: 'bluesky',
            name: row.accountName ?? `@${connected.handle}`,
            config: { oauthTicket: ticket },
          }),
        );
        await this.oauth.settle(ticket);
        await this.sessions.flash(session, {
          tone: 'success',
          text: `Bluesky account “${created.name}” connected with OAuth (posting as @${connected.handle}).`,
        });
        return { ok: true, status: 200, message: `Bluesky account “${created.name}” connected.`, session, stateUsed };
      }
      const account = await this.accounts.get(workspaceId, row.accountId);
      const expected = typeof account.config.did === 'string' ? account.config.did : null;
      if (expected !== null && expected !== connected.did) {
        await this.oauth.abandon(ticket);
        return refuse(
          `You signed in to Bluesky as @${connected.handle} (${connected.did}), but “${account.name}” posts as ${expected}. Sign in as that account (or connect a new one). Nothing was changed.`,
          session,
        );
      }
      const before = (await this.jobs.accountActivity(workspaceId, [account.id])).get(account.id);
      const updated = await this.accounts.update(
        session.auth,
        account.id,
        await asDto(UpdateAccountDto, { config: { oauthTicket: ticket } }),
      );
      await this.oauth.settle(ticket);
      await this.sessions.flash(
        session,
        reconnectedFlash(updated.name, account.status !== 'active' ? (before?.paused ?? 0) : 0, before?.dead ?? 0, account.id),
      );
      return { ok: true, status: 200, message: `Bluesky account “${updated.name}” reconnected.`, session, stateUsed };
    } catch (err) {
      await this.oauth.abandon(ticket);
      throw err;
    }
  }
}
