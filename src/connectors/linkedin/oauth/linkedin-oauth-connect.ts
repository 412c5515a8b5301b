import { Inject, Injectable } from '@nestjs/common';
import { HERALD_CONFIG, HeraldConfig } from '../../../config/config';
import { AuthorizeStep, ConnectAccount, OAuthConnect, OAuthConnectError, OAuthGrant } from '../../oauth-connect.interface';
import { LinkedInOAuthClient } from './linkedin-oauth.client';
import {
  authorizationUrl,
  CALLBACK_PATH,
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

/**
 * LinkedIn's side of "Connect with LinkedIn": the authorization code flow (linkedin-oauth.ts)
 * with the operator's app (LINKEDIN_CLIENT_ID, LINKEDIN_CLIENT_SECRET). Herald's state is sent to
 * LinkedIn as the `state` parameter itself and comes back as it is. The grant is the access token
 * (and a refresh token, for partner apps) of the member `/v2/userinfo` names; the LinkedIn
 * connector validates and stores it like any API-given one.
 */
@Injectable()
export class LinkedInOAuthConnect implements OAuthConnect {
  readonly provider = 'linkedin' as const;
  readonly label = 'LinkedIn';
  readonly scope = LINKEDIN_SCOPES.join(' ');
  readonly flowTtlMs = STATE_TTL_MS;

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly client: LinkedInOAuthClient,
  ) {}

  private get enabled(): boolean {
    return this.config.linkedin.clientId !== null && this.config.linkedin.clientSecret !== null;
  }

  private get redirectUri(): string {
    return `${this.config.publicUrl}${CALLBACK_PATH}`;
  }

  availability(): { ok: true } | { ok: false; reason: string } {
    return this.enabled
      ? { ok: true }
      : { ok: false, reason: 'Connect with LinkedIn needs LINKEDIN_CLIENT_ID and LINKEDIN_CLIENT_SECRET; paste an access token instead' };
  }

  /** LinkedIn asks the member to sign in itself. */
  signInHint(): null {
    return null;
  }

  authorize(state: string): Promise<AuthorizeStep> {
    return Promise.resolve({
      url: new URL(
        authorizationUrl(this.config.linkedin.oauthBaseUrl, {
          clientId: this.config.linkedin.clientId!,
          redirectUri: this.redirectUri,
          state,
          scopes: LINKEDIN_SCOPES,
        }),
      ),
    });
  }

  /** LinkedIn sends Herald's state back as it is. */
  stateOf(params: URLSearchParams): Promise<string | null> {
    if (!this.enabled) return Promise.reject(new OAuthConnectError('Connect with LinkedIn is not configured on this Herald.'));
    const state = params.get('state') ?? '';
    if (state === '' || state.length > 200) {
      return Promise.reject(
        new OAuthConnectError('LinkedIn sent no state back, so this answer cannot be tied to your request. Nothing was changed.'),
      );
    }
    return Promise.resolve(state);
  }

  async complete(params: URLSearchParams, requestedScopes: string): Promise<OAuthGrant> {
    const error = params.get('error') ?? '';
    const code = params.get('code') ?? '';
    if (error !== '') throw new OAuthConnectError(describeCallbackError(error, params.get('error_description') ?? ''));
    if (code === '' || code.length > 2000) throw new OAuthConnectError('LinkedIn sent no authorization code. Nothing was changed.');

    const secrets = [this.config.linkedin.clientSecret!, code];
    const exchanged = await this.client.exchangeCode(
      tokenRequestBody({
        code,
        clientId: this.config.linkedin.clientId!,
        clientSecret: this.config.linkedin.clientSecret!,
        redirectUri: this.redirectUri,
      }),
    );
    if (exchanged.kind === 'network_error')
      throw new OAuthConnectError(
        `LinkedIn could not be reached to finish the connection (${exchanged.message}). Nothing was changed.`,
        'platform',
      );
    const token = parseTokenResponse(exchanged.status, exchanged.bodyText, new Date(), secrets);
    if (!token.ok) throw new OAuthConnectError(`${token.message}. Nothing was changed.`, 'platform');
    const missing = missingScopes(parseScopes(requestedScopes), token.token.grantedScopes);
    if (missing.length > 0) {
      throw new OAuthConnectError(
        `LinkedIn did not grant ${missing.join(', ')} (granted: ${token.token.grantedScopes!.join(', ') || 'nothing'}). Herald needs every one of ${requestedScopes} to post; check the app's products in the LinkedIn developer portal. Nothing was changed.`,
      );
    }
    const who = await this.client.userinfo(token.token.accessToken);
    const memberId = who.kind === 'response' && who.status === 200 ? memberIdFrom(who.bodyText) : null;
    if (memberId === null) {
      const why = who.kind === 'network_error' ? who.message : `HTTP ${who.status}`;
      throw new OAuthConnectError(`LinkedIn did not say which member signed in (/v2/userinfo: ${why}). Nothing was changed.`, 'platform');
    }
    const authorUrn = `urn:li:person:${memberId}`;
    const credentials = {
      accessToken: token.token.accessToken,
      authorUrn,
      ...(token.token.expiresAt ? { expiresAt: token.token.expiresAt } : {}),
      // Absent when LinkedIn sent none: a reconnect then keeps the stored refresh token.
      ...(token.token.refreshToken ? { refreshToken: token.token.refreshToken } : {}),
    };
    return {
      defaultName: (who.kind === 'response' ? memberNameFrom(who.bodyText) : null) ?? 'LinkedIn',
      postingAs: authorUrn,
      newAccountConfig: credentials,
      reconnectConfig: (account: ConnectAccount) => {
        const current = typeof account.config.authorUrn === 'string' ? account.config.authorUrn : null;
        // A member author must be the member who signed in; an organization author is kept as it is.
        if (current !== null && current.startsWith('urn:li:person:') && current !== authorUrn) {
          throw new OAuthConnectError(
            `You signed in to LinkedIn as ${authorUrn}, but “${account.name}” posts as ${current}. Sign in as that member (or connect a new account). Nothing was changed.`,
          );
        }
        return {
          ...credentials,
          authorUrn: current ?? authorUrn,
          ...(typeof account.config.apiBaseUrl === 'string' ? { apiBaseUrl: account.config.apiBaseUrl } : {}),
        };
      },
      // The token is only a value: nothing at LinkedIn to settle or let go.
      settle: () => Promise.resolve(),
      abandon: () => Promise.resolve(),
    };
  }
}
