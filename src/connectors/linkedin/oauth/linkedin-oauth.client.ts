import { Inject, Injectable } from '@nestjs/common';
import { FetchError, FetchLike, guardedFetch } from '../../../common/net/guarded-fetch';
import { HERALD_CONFIG, HeraldConfig } from '../../../config/config';

export type OAuthHttpResult = { kind: 'response'; status: number; bodyText: string } | { kind: 'network_error'; message: string };

/** LinkedIn answers these calls with small JSON bodies. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The two calls of the connect flow, through the outbound HTTP layer (connect and total
 * timeouts, bounded body, SSRF guard, no redirects). Only ever to the operator's configured
 * endpoints (LINKEDIN_OAUTH_BASE_URL, LINKEDIN_API_BASE_URL): the client secret goes nowhere else.
 */
@Injectable()
export class LinkedInOAuthClient {
  private readonly fetch: FetchLike;

  constructor(@Inject(HERALD_CONFIG) private readonly config: HeraldConfig) {
    this.fetch = guardedFetch({
      connectTimeoutMs: config.http.connectTimeoutMs,
      totalTimeoutMs: config.http.totalTimeoutMs,
      maxBodyBytes: MAX_BODY_BYTES,
      allowPrivate: config.allowPrivateUrls,
    });
  }

  /** `POST {LINKEDIN_OAUTH_BASE_URL}/oauth/v2/accessToken` (form-encoded). */
  exchangeCode(body: string): Promise<OAuthHttpResult> {
    return this.send(`${this.config.linkedin.oauthBaseUrl}/oauth/v2/accessToken`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': 'Herald/1.0' },
      body,
    });
  }

  /** `GET {LINKEDIN_API_BASE_URL}/v2/userinfo`: the member behind the token. */
  userinfo(accessToken: string): Promise<OAuthHttpResult> {
    return this.send(`${this.config.linkedin.apiBaseUrl}/v2/userinfo`, {
      method: 'GET',
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'Herald/1.0' },
    });
  }

  private async send(url: string, init: RequestInit): Promise<OAuthHttpResult> {
    try {
      const res = await this.fetch(url, init);
      return { kind: 'response', status: res.status, bodyText: await res.text() };
    } catch (err) {
      // FetchError messages name hosts and codes, never headers or bodies.
      const message = err instanceof FetchError ? `${err.code}: ${err.message}` : 'the request failed';
      return { kind: 'network_error', message };
    }
  }
}
