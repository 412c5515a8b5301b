import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { CreateAccountDto, UpdateAccountDto } from '../../accounts/accounts.dto';
import { AccountsService } from '../../accounts/accounts.service';
import { invalidInput } from '../../common/errors';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import { JobsService } from '../../jobs/jobs.service';
import { asDto } from '../form-validation';
import { allows } from '../../access/roles';
import type { Flash } from '../session/sessions.repository';
import { PageSession, SessionsService } from '../session/sessions.service';
import { LinkedInOAuthClient } from './linkedin-oauth.client';
import {
  authorizationUrl,
  describeCallbackError,
  LINKEDIN_SCOPES,
  memberIdFrom,
  memberNameFrom,
  missingScopes,
  parseScopes,
  parseTokenResponse,
  STATE_TTL_MS,
  tokenRequestBody,
} from './linkedin-oauth';
import { OAuthStatesRepository } from './oauth-states.repository';

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

export interface CallbackQuery {
  code: string;
  state: string;
  error: string;
  errorDescription: string;
}

/** How the callback ended: the message to show and, when the flow got that far, its session. */
export interface CallbackOutcome {
  ok: boolean;
  status: number;
  message: string;
  session: PageSession | null;
  /** The state matched a pending flow (now used up): its browser cookie has served. */
  stateUsed: boolean;
}

/**
 * "Connect with LinkedIn": the authorization code flow (linkedin-oauth.ts) with a `state` of
 * 256 random bits, bound to the page session that started it and to that browser (a cookie),
 * usable once, valid 15 minutes. The account is created or reconnected through AccountsService,
 * so the LinkedIn connector validates and stores the token like any API-given one.
 */
@Injectable()
export class LinkedInOAuthService {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly states: OAuthStatesRepository,
    private readonly client: LinkedInOAuthClient,
    private readonly sessions: SessionsService,
    private readonly accounts: AccountsService,
    private readonly jobs: JobsService,
  ) {}

  get enabled(): boolean {
    return this.config.linkedin.clientId !== null && this.config.linkedin.clientSecret !== null;
  }

  get redirectUri(): string {
    return `${this.config.publicUrl}/settings/linkedin/callback`;
  }

  /** Starts a connect (a name) or a reconnect (an account id): the URL to send the browser to and the browser's cookie value. */
  async start(session: PageSession, target: { accountId: string } | { name: string }): Promise<{ url: string; browserToken: string }> {
    if (!this.enabled)
      throw invalidInput('Connect with LinkedIn needs LINKEDIN_CLIENT_ID and LINKEDIN_CLIENT_SECRET; paste an access token instead');
    let accountId: string | null = null;
    let accountName: string | null = null;
    if ('accountId' in target) {
      const account = await this.accounts.get(session.auth.workspaceId, target.accountId);
      if (account.provider !== 'linkedin') throw invalidInput(`${account.name} is not a LinkedIn account`);
      accountId = account.id;
    } else {
      // The API's own rules for a name, before the person goes to LinkedIn and back.
      await asDto(CreateAccountDto, { provider: 'linkedin', name: target.name, config: {} });
      accountName = target.name;
    }
    const state = randomBytes(32).toString('base64url');
    const browserToken = randomBytes(32).toString('base64url');
    await this.states.insert({
      stateHash: sha256(state),
      sessionId: session.id,
      browserHash: sha256(browserToken),
      accountId,
      accountName,
      requestedScopes: LINKEDIN_SCOPES.join(' '),
      expiresAt: new Date(Date.now() + STATE_TTL_MS),
    });
    const url = authorizationUrl(this.config.linkedin.oauthBaseUrl, {
      clientId: this.config.linkedin.clientId!,
      redirectUri: this.redirectUri,
      state,
      scopes: LINKEDIN_SCOPES,
    });
    return { url, browserToken };
  }

  /** LinkedIn's redirect back. Every refusal changes nothing (and uses the state up). */
  async callback(query: CallbackQuery, browserToken: string | undefined): Promise<CallbackOutcome> {
    let stateUsed = false;
    const refuse = (message: string, session: PageSession | null = null, status = 400): CallbackOutcome => ({
      ok: false,
      status,
      message,
      session,
      stateUsed,
    });
    if (!this.enabled) return refuse('Connect with LinkedIn is not configured on this Herald.');
    if (query.state === '' || query.state.length > 200)
      return refuse('LinkedIn sent no state back, so this answer cannot be tied to your request. Nothing was changed.');
    // The state is used up only by the browser that started the flow (its cookie): another
    // browser's callback leaves the flow to its owner.
    const stateHash = sha256(query.state);
    const browserHash = browserToken && browserToken.length <= 200 ? sha256(browserToken) : null;
    const row = browserHash ? await this.states.consume(stateHash, browserHash) : null;
    stateUsed = row !== null;
    if (!row) {
      if (await this.states.pending(stateHash)) {
        return refuse('This LinkedIn answer reached a different browser than the one that started the connection. Nothing was changed.');
      }
      return refuse(
        'This LinkedIn answer does not match a connection started here (unknown, expired or already used). Nothing was changed; start again from the accounts page.',
      );
    }
    const session = await this.sessions.resolveById(row.sessionId);
    if (!session) return refuse('Your session ended while you were at LinkedIn. Log in and start again; nothing was changed.', null, 401);
    // The role that allowed the start may have been lowered since (the page checks it per request).
    if (!allows(session.auth, 'edit'))
      return refuse('Your role does not allow connecting accounts any more. Nothing was changed.', session, 403);
    if (query.error !== '') return refuse(describeCallbackError(query.error, query.errorDescription), session);
    if (query.code === '' || query.code.length > 2000) return refuse('LinkedIn sent no authorization code. Nothing was changed.', session);

    const secrets = [this.config.linkedin.clientSecret!, query.code];
    const exchanged = await this.client.exchangeCode(
      tokenRequestBody({
        code: query.code,
        clientId: this.config.linkedin.clientId!,
        clientSecret: this.config.linkedin.clientSecret!,
        redirectUri: this.redirectUri,
      }),
    );
    if (exchanged.kind === 'network_error')
      return refuse(`LinkedIn could not be reached to finish the connection (${exchanged.message}). Nothing was changed.`, session, 502);
    const token = parseTokenResponse(exchanged.status, exchanged.bodyText, new Date(), secrets);
    if (!token.ok) return refuse(`${token.message}. Nothing was changed.`, session, 502);
    const missing = missingScopes(parseScopes(row.requestedScopes), token.token.grantedScopes);
    if (missing.length > 0) {
      return refuse(
        `LinkedIn did not grant ${missing.join(', ')} (granted: ${token.token.grantedScopes!.join(', ') || 'nothing'}). Herald needs every one of ${row.requestedScopes} to post; check the app's products in the LinkedIn developer portal. Nothing was changed.`,
        session,
      );
    }
    const who = await this.client.userinfo(token.token.accessToken);
    const memberId = who.kind === 'response' && who.status === 200 ? memberIdFrom(who.bodyText) : null;
    if (memberId === null) {
      const why = who.kind === 'network_error' ? who.message : `HTTP ${who.status}`;
      return refuse(`LinkedIn did not say which member signed in (/v2/userinfo: ${why}). Nothing was changed.`, session, 502);
    }
    const authorUrn = `urn:li:person:${memberId}`;
    const credentials = {
      accessToken: token.token.accessToken,
      authorUrn,
      ...(token.token.expiresAt ? { expiresAt: token.token.expiresAt } : {}),
      // Absent when LinkedIn sent none: a reconnect then keeps the stored refresh token.
      ...(token.token.refreshToken ? { refreshToken: token.token.refreshToken } : {}),
    };
    const workspaceId = session.auth.workspaceId;
    if (row.accountId === null) {
      const name = row.accountName ?? (who.kind === 'response' ? memberNameFrom(who.bodyText) : null) ?? 'LinkedIn';
      const created = await this.accounts.create(
        session.auth,
        await asDto(CreateAccountDto, { provider: 'linkedin', name, config: credentials }),
      );
      await this.sessions.flash(session, {
        tone: 'success',
        text: `LinkedIn account “${created.name}” connected (posting as ${authorUrn}).`,
      });
      return { ok: true, status: 200, message: `LinkedIn account “${created.name}” connected.`, session, stateUsed };
    }
    const account = await this.accounts.get(workspaceId, row.accountId);
    const current = typeof account.config.authorUrn === 'string' ? account.config.authorUrn : null;
    if (current !== null && current.startsWith('urn:li:person:') && current !== authorUrn) {
      return refuse(
        `You signed in to LinkedIn as ${authorUrn}, but “${account.name}” posts as ${current}. Sign in as that member (or connect a new account). Nothing was changed.`,
        session,
      );
    }
    const before = (await this.jobs.accountActivity(workspaceId, [account.id])).get(account.id);
    const config = {
      ...credentials,
      authorUrn: current ?? authorUrn,
      ...(typeof account.config.apiBaseUrl === 'string' ? { apiBaseUrl: account.config.apiBaseUrl } : {}),
    };
    const updated = await this.accounts.update(session.auth, account.id, await asDto(UpdateAccountDto, { config }));
    await this.sessions.flash(
      session,
      reconnectedFlash(updated.name, account.status !== 'active' ? (before?.paused ?? 0) : 0, before?.dead ?? 0, account.id),
    );
    return { ok: true, status: 200, message: `LinkedIn account “${updated.name}” reconnected.`, session, stateUsed };
  }
}

/** The message after new credentials were saved: what resumed, and one click to requeue the failed posts. */
export function reconnectedFlash(name: string, resumed: number, dead: number, accountId: string): Flash {
  const posts = (n: number) => `${n} post${n === 1 ? '' : 's'}`;
  const going =
    resumed === 1
      ? ' The post waiting for it is going out now.'
      : resumed > 1
        ? ` The ${resumed} posts waiting for it are going out now.`
        : '';
  const text = `“${name}” reconnected.${going}`;
  if (dead === 0) return { tone: 'success', text };
  return {
    tone: 'success',
    text: `${text} It has ${posts(dead)} in the failed posts.`,
    followUp: { label: `Requeue its ${posts(dead)}`, action: `/settings/accounts/${accountId}/requeue-failed` },
  };
}
