import { Inject, Injectable } from '@nestjs/common';
import { send } from '../../../common/net/http-client';
import { HERALD_CONFIG, HeraldConfig } from '../../../config/config';
import { USER_AGENT } from '../mastodon-client';

export type OAuthAnswer = { kind: 'response'; status: number; bodyText: string } | { kind: 'network_error'; message: string };

/** Every answer of these calls is a small JSON document (an application, a token, an account, the metadata). */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The calls of "Connect with Mastodon" to the instance a person named, through Herald's one
 * outbound layer (common/net/http-client.ts) as every call to an instance goes: the SSRF guard at
 * connect time (loopback and private addresses refused unless HERALD_ALLOW_PRIVATE_URLS), a
 * connect timeout and a total deadline, a bounded body, no redirects (a redirect would carry the
 * client secret or the code elsewhere). Forms are form-encoded as Mastodon's OAuth endpoints
 * document them; the registration is JSON.
 */
@Injectable()
export class MastodonOAuthClient {
  constructor(@Inject(HERALD_CONFIG) private readonly config: HeraldConfig) {}

  /** `GET /.well-known/oauth-authorization-server` (Mastodon 4.3+): whether PKCE is offered. */
  serverMetadata(instanceUrl: string): Promise<OAuthAnswer> {
    return this.send(instanceUrl, 'GET', '/.well-known/oauth-authorization-server', null, null);
  }

  /** `POST /api/v1/apps`: registers Herald on the instance. */
  registerApp(instanceUrl: string, body: Record<string, string>): Promise<OAuthAnswer> {
    return this.send(instanceUrl, 'POST', '/api/v1/apps', { type: 'application/json', text: JSON.stringify(body) }, null);
  }

  /** `POST /oauth/token`: the code for a token. */
  exchangeCode(instanceUrl: string, form: string): Promise<OAuthAnswer> {
    return this.send(instanceUrl, 'POST', '/oauth/token', { type: 'application/x-www-form-urlencoded', text: form }, null);
  }

  /** `POST /oauth/revoke` (`client_id`, `client_secret`, `token`): a token Herald will not keep stops working. */
  revoke(instanceUrl: string, form: string): Promise<OAuthAnswer> {
    return this.send(instanceUrl, 'POST', '/oauth/revoke', { type: 'application/x-www-form-urlencoded', text: form }, null);
  }

  /** `GET /api/v1/accounts/verify_credentials`: who the token belongs to. */
  whoAmI(instanceUrl: string, token: string): Promise<OAuthAnswer> {
    return this.send(instanceUrl, 'GET', '/api/v1/accounts/verify_credentials', null, token);
  }

  private async send(
    instanceUrl: string,
    method: 'GET' | 'POST',
    path: string,
    body: { type: string; text: string } | null,
    token: string | null,
  ): Promise<OAuthAnswer> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT };
    if (body) headers['content-type'] = body.type;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const result = await send(
      { method, url: `${instanceUrl}${path}`, headers, body: body?.text ?? null },
      {
        connectTimeoutMs: this.config.http.connectTimeoutMs,
        totalTimeoutMs: this.config.http.totalTimeoutMs,
        allowPrivate: this.config.allowPrivateUrls,
        maxBodyBytes: MAX_BODY_BYTES,
      },
    );
    // Messages name the host and a code, never a header or a body.
    if (result.kind === 'network_error') return { kind: 'network_error', message: `${result.code}: ${result.message}` };
    if (result.cut !== null) return { kind: 'network_error', message: `the answer did not arrive whole (${result.cut})` };
    return { kind: 'response', status: result.status, bodyText: result.body.toString('utf8') };
  }
}
