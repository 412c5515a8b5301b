import { Inject, Injectable, Logger } from '@nestjs/common';
import { assertPublicUrl, BlockedUrlError } from '../../../common/net/ssrf-guard';
import { HERALD_CONFIG, HeraldConfig } from '../../../config/config';
import { AuthorizeStep, ConnectAccount, OAuthConnect, OAuthConnectError, OAuthGrant } from '../../oauth-connect.interface';
import { MastodonAccount, parseAccount, parseJson } from '../mastodon-answers';
import { MastodonApp, MastodonApps } from './mastodon-apps';
import { MastodonOAuthClient } from './mastodon-oauth.client';
import {
  authorizationUrl,
  CALLBACK_PATH,
  codeChallenge,
  codeVerifier,
  describeCallbackError,
  FLOW_TTL_MS,
  InstanceAddressError,
  MASTODON_SCOPES,
  missingScopes,
  normalizeInstanceUrl,
  offersS256,
  parseScopes,
  parseTokenResponse,
  readFlowNote,
  tokenRequestBody,
  verifierKey,
  writeFlowNote,
} from './mastodon-oauth';

/**
 * Mastodon's side of "Connect with Mastodon" and "Reconnect with Mastodon", on any instance:
 *
 * - the person names the instance (the sign-in hint), normalized to its https origin and checked
 *   against the SSRF guard before anything is sent to it; every call to it goes through the
 *   guarded outbound layer (mastodon-oauth.client.ts);
 * - Herald's registration on that instance is found or made (mastodon-apps.ts);
 * - PKCE (S256) when the instance's `/.well-known/oauth-authorization-server` lists it (4.3+),
 *   the plain code flow with the client secret otherwise; the verifier is derived from Herald's
 *   state (mastodon-oauth.ts `codeVerifier` says why), so nothing more is stored;
 * - the callback exchanges the code, checks the scopes granted, reads who signed in
 *   (`verify_credentials`), and grants `{ instanceUrl, accessToken }`, which the Mastodon
 *   connector validates and stores like a pasted token (AccountsService).
 *
 * A token Herald does not keep (a refusal after the exchange, an account that could not be
 * saved) is revoked at the instance (`POST /oauth/revoke`).
 */
@Injectable()
export class MastodonOAuthConnect implements OAuthConnect {
  readonly provider = 'mastodon' as const;
  readonly label = 'Mastodon';
  readonly scope = MASTODON_SCOPES.join(' ');
  readonly flowTtlMs = FLOW_TTL_MS;
  private readonly key: Buffer;
  private readonly log = new Logger('MastodonOAuth');

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly apps: MastodonApps,
    private readonly client: MastodonOAuthClient,
  ) {
    this.key = verifierKey(config.secretKey);
  }

  private get redirectUri(): string {
    return `${this.config.publicUrl}${CALLBACK_PATH}`;
  }

  /** Any instance: Herald registers itself on each one when first used; nothing to configure. */
  availability(): { ok: true } {
    return { ok: true };
  }

  /** The instance: as the person named it, or the one the reconnected account posts on. */
  signInHint(from: { identifier: string } | { account: ConnectAccount }): string {
    try {
      if ('account' in from) {
        const stored = from.account.config.instanceUrl;
        if (typeof stored !== 'string') throw new InstanceAddressError(`${from.account.name} has no Mastodon instance; connect it again`);
        // The same rules as a new connect: the client secret and the code never travel over plain http.
        return normalizeInstanceUrl(stored, this.config.allowPrivateUrls);
      }
      return normalizeInstanceUrl(from.identifier, this.config.allowPrivateUrls);
    } catch (err) {
      if (err instanceof InstanceAddressError) throw new OAuthConnectError(err.message);
      throw err;
    }
  }

  async authorize(state: string, hint: string | null): Promise<AuthorizeStep> {
    if (hint === null) throw new OAuthConnectError('Give the address of your Mastodon instance (e.g. mastodon.social).');
    const instanceUrl = hint;
    const host = new URL(instanceUrl).host;
    try {
      await assertPublicUrl(instanceUrl, this.config.allowPrivateUrls);
    } catch (err) {
      if (err instanceof BlockedUrlError) throw new OAuthConnectError(`Herald does not connect to ${host}: ${err.message}.`);
      throw err;
    }
    const metadata = await this.client.serverMetadata(instanceUrl);
    if (metadata.kind === 'network_error') {
      throw new OAuthConnectError(`${host} could not be reached (${metadata.message}). Check the address; nothing was changed.`);
    }
    const pkce = offersS256(metadata.status, metadata.bodyText);
    const app = await this.apps.forFlow(instanceUrl, this.redirectUri);
    const url = authorizationUrl(instanceUrl, {
      clientId: app.clientId,
      redirectUri: this.redirectUri,
      state,
      scopes: MASTODON_SCOPES,
      codeChallenge: pkce ? codeChallenge(codeVerifier(this.key, state)) : null,
    });
    return { url, flow: writeFlowNote({ instanceUrl, clientId: app.clientId, pkce }) };
  }

  /** The instance sends Herald's state back as it is. */
  stateOf(params: URLSearchParams): Promise<string | null> {
    const state = params.get('state') ?? '';
    if (state === '' || state.length > 200) {
      return Promise.reject(
        new OAuthConnectError('The instance sent no state back, so this answer cannot be tied to your request. Nothing was changed.'),
      );
    }
    return Promise.resolve(state);
  }

  async complete(params: URLSearchParams, requestedScopes: string, flow: string | null): Promise<OAuthGrant> {
    const note = readFlowNote(flow);
    if (note === null)
      throw new OAuthConnectError('This connection was started before an upgrade of Herald; start again. Nothing was changed.');
    const { instanceUrl } = note;
    const host = new URL(instanceUrl).host;
    const error = params.get('error') ?? '';
    if (error !== '') throw new OAuthConnectError(describeCallbackError(host, error, params.get('error_description') ?? ''));
    const code = params.get('code') ?? '';
    if (code === '' || code.length > 2000) throw new OAuthConnectError(`${host} sent no authorization code. Nothing was changed.`);

    const app = await this.apps.forCallback(instanceUrl, this.redirectUri, note.clientId);
    if (!app) {
      throw new OAuthConnectError(
        `Herald's registration on ${host} was renewed while you were signing in, so this answer can no longer be used. Start again; nothing was changed.`,
      );
    }
    const state = params.get('state') ?? '';
    const verifier = note.pkce ? codeVerifier(this.key, state) : null;
    const secrets = [app.clientSecret, code, ...(verifier ? [verifier] : [])];
    const exchanged = await this.client.exchangeCode(
      instanceUrl,
      tokenRequestBody({
        code,
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        redirectUri: this.redirectUri,
        codeVerifier: verifier,
      }),
    );
    if (exchanged.kind === 'network_error') {
      throw new OAuthConnectError(
        `${host} could not be reached to finish the connection (${exchanged.message}). Nothing was changed.`,
        'platform',
      );
    }
    const token = parseTokenResponse(host, exchanged.status, exchanged.bodyText, secrets);
    if (!token.ok) throw new OAuthConnectError(`${token.message}. Nothing was changed.`, 'platform');
    const accessToken = token.accessToken;

    const missing = missingScopes(parseScopes(requestedScopes), token.grantedScopes);
    if (missing.length > 0) {
      await this.revoke(instanceUrl, app, accessToken);
      throw new OAuthConnectError(
        `${host} did not grant ${missing.join(', ')} (granted: ${token.grantedScopes!.join(', ') || 'nothing'}). Herald needs every one of ${requestedScopes} to post. Nothing was changed.`,
      );
    }
    const who = await this.whoSignedIn(instanceUrl, accessToken);
    if ('problem' in who) {
      await this.revoke(instanceUrl, app, accessToken);
      throw new OAuthConnectError(`${who.problem}. Nothing was changed.`, 'platform');
    }
    const account = who.account;
    const handle = `@${account.username}@${host}`;
    return {
      defaultName: account.displayName.trim() || handle,
      postingAs: handle,
      newAccountConfig: { instanceUrl, accessToken },
      reconnectConfig: (existing: ConnectAccount) => {
        const expectedId = typeof existing.config.accountId === 'string' ? existing.config.accountId : null;
        if (expectedId !== null && expectedId !== account.id) {
          const expected = typeof existing.config.username === 'string' ? `@${existing.config.username}@${host}` : `account ${expectedId}`;
          throw new OAuthConnectError(
            `You signed in to ${host} as ${handle}, but “${existing.name}” posts as ${expected}. Sign in as that account (or connect a new one). Nothing was changed.`,
          );
        }
        return { instanceUrl, accessToken };
      },
      // The token is only a value: saved, it is the account's; not saved, the instance forgets it.
      settle: () => Promise.resolve(),
      abandon: () => this.revoke(instanceUrl, app, accessToken),
    };
  }

  /** `verify_credentials` with the new token: the account it posts as. */
  private async whoSignedIn(instanceUrl: string, token: string): Promise<{ account: MastodonAccount } | { problem: string }> {
    const host = new URL(instanceUrl).host;
    const res = await this.client.whoAmI(instanceUrl, token);
    if (res.kind === 'network_error') return { problem: `${host} could not be reached to say who signed in (${res.message})` };
    const account = res.status === 200 ? parseAccount(parseJson(res.bodyText)) : null;
    if (!account) return { problem: `${host} did not say which account signed in (verify_credentials: HTTP ${res.status})` };
    return { account };
  }

  /** Best effort: a token Herald lets go should stop working; a failure is logged (without the token), not shown. */
  private async revoke(instanceUrl: string, app: MastodonApp, token: string): Promise<void> {
    const form = new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, token }).toString();
    const res = await this.client.revoke(instanceUrl, form);
    if (res.kind === 'network_error' || res.status !== 200) {
      const why = res.kind === 'network_error' ? res.message : `HTTP ${res.status}`;
      this.log.warn(`a token Herald did not keep could not be revoked at ${new URL(instanceUrl).host} (${why})`);
    }
  }
}
