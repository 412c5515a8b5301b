import { Inject, Injectable } from '@nestjs/common';
import type { HttpResult } from '../../common/net/http-client';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import { Connector, DeliveryAccount, DeliveryJob, DeliveryOutcome, PreparedAccount, Provider, VerifyResult } from '../connector.interface';
import { LinkedInClient } from './linkedin-client';
import { LinkedInConfig, LinkedInCredentials, needsRefresh, parseLinkedInInput, storedConfig, storedCredentials } from './linkedin-config';
import { LINKEDIN_MAX_IMAGES, LinkedInImage, linkedinContent, linkedinText } from './linkedin-content';
import { toLinkedInImage } from './linkedin-images';
import { LinkedInOutcomeContext, linkedinOutcome } from './linkedin-outcome';
import { toLittleText } from './linkedin-text';
import { poisonOutcome } from '../outcome-kit';

export type LinkedInConnectorConfig = Pick<HeraldConfig, 'allowPrivateUrls' | 'http' | 'linkedin'>;

const USER_AGENT = 'Herald/1.0';

interface Session {
  config: LinkedInConfig;
  /** The operator's LINKEDIN_API_BASE_URL / LINKEDIN_OAUTH_BASE_URL: never an account's choice. */
  api: string;
  oauth: string;
  credentials: LinkedInCredentials;
  /** Set once the token was refreshed during this attempt: stored by the worker. */
  refreshed: boolean;
}

/** A step's failure, carried out of the publishing sequence. */
class StepFailed extends Error {
  constructor(
    readonly result: HttpResult,
    readonly step: string,
    readonly url: string,
  ) {
    super(`LinkedIn step failed: ${step}`);
    this.name = 'StepFailed';
  }
}

/**
 * LinkedIn Posts API: images through the Images API, then one
 * `POST /rest/posts`; the URN from `x-restli-id`. The access token is refreshed ahead of its
 * expiry and once after a 401 when a refresh token (partner apps only) and the app's client
 * credentials are available; the new tokens go back to the worker as `credentialsUpdate`.
 *
 * Every call goes to the operator's endpoints (LINKEDIN_API_BASE_URL, LINKEDIN_OAUTH_BASE_URL),
 * never to a URL from an account's config: the token refresh carries the operator's
 * LINKEDIN_CLIENT_SECRET, which no workspace may direct to a server of its own. Every call of an
 * attempt stops at the attempt's deadline (its signal).
 */
@Injectable()
export class LinkedInConnector implements Connector {
  readonly provider: Provider = 'linkedin';
  private readonly client: LinkedInClient;

  constructor(@Inject(HERALD_CONFIG) private readonly config: LinkedInConnectorConfig) {
    this.client = new LinkedInClient({
      allowPrivate: config.allowPrivateUrls,
      connectTimeoutMs: config.http.connectTimeoutMs,
      totalTimeoutMs: config.http.totalTimeoutMs,
    });
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async turns the parser's throw into the rejection the Connector interface promises
  async prepareAccount(input: unknown, previous: Record<string, unknown> | null = null): Promise<PreparedAccount> {
    const { config, credentials } = parseLinkedInInput(input);
    // New credentials without a `refreshToken` field keep the stored refresh token (`null`
    // clears it): LinkedIn gives refresh tokens to partner apps only, and a reconnect through
    // the authorization flow need not return the one it issued before.
    const kept = previous ? (storedCredentials(previous)?.refreshToken ?? null) : null;
    const omitted = typeof input === 'object' && input !== null && !('refreshToken' in input);
    if (omitted && credentials.refreshToken === null && kept !== null) {
      credentials.refreshToken = kept;
      config.hasRefreshToken = true;
    }
    return { config: { ...config }, credentials: { ...credentials } };
  }

  async verify(account: DeliveryAccount): Promise<VerifyResult> {
    const session = this.session(account);
    if ('problem' in session) return { ok: false, message: session.problem };
    const url = `${session.api}/v2/userinfo`;
    const res = await this.client.send({ method: 'GET', url, headers: this.authHeaders(session), needBody: true });
    if (res.kind === 'network_error') {
      const outcome = linkedinOutcome(res, this.context(null, session, 'checking the token', url));
      return {
        ok: false,
        message: `LinkedIn could not be reached: ${outcome.message ?? res.code}`,
        details: { networkError: outcome.networkError },
      };
    }
    if (res.status === 401)
      return {
        ok: false,
        message: 'LinkedIn rejected the access token (expired or revoked); reconnect the account',
        details: { httpStatus: 401 },
      };
    if (res.status !== 200)
      return { ok: false, message: `LinkedIn answered ${res.status} to /v2/userinfo`, details: { httpStatus: res.status } };
    let sub: unknown;
    try {
      sub = (JSON.parse(res.body.toString('utf8')) as { sub?: unknown }).sub;
    } catch {
      sub = undefined;
    }
    const urn = session.config.authorUrn;
    if (urn.startsWith('urn:li:person:')) {
      if (typeof sub !== 'string' || `urn:li:person:${sub}` !== urn) {
        return {
          ok: false,
          message: `the token belongs to urn:li:person:${String(sub)}, not to the configured authorUrn ${urn}`,
          details: { httpStatus: 200 },
        };
      }
      return { ok: true, message: `the token is valid and belongs to ${urn}`, details: { httpStatus: 200 } };
    }
    return {
      ok: true,
      message: `the token is valid (member urn:li:person:${String(sub)}); posting as ${urn} also needs a page admin role`,
      details: { httpStatus: 200 },
    };
  }

  async deliver(job: DeliveryJob, account: DeliveryAccount, signal: AbortSignal): Promise<DeliveryOutcome> {
    const session = this.session(account);
    if ('problem' in session) return this.outcomeWithCredentials({ ...poisonOutcome(session.problem), errorClass: 'auth' }, null);
    const missing = job.payload.media.filter((id) => !job.media.some((m) => m.id === id));
    if (missing.length > 0)
      return poisonOutcome(`media ${missing.join(', ')} no longer exists; edit the post's media in the dead-letter queue`);
    const now = new Date();

    if (needsRefresh(session.credentials, now)) {
      const failure = await this.refresh(session, job, signal);
      if (failure) return this.outcomeWithCredentials(failure, session);
    }
    let outcome = await this.publish(job, session, signal);
    if (outcome.httpStatus === 401 && this.canRefresh(session) && !session.refreshed) {
      const failure = await this.refresh(session, job, signal);
      if (failure) return this.outcomeWithCredentials(failure, session);
      outcome = await this.publish(job, session, signal);
    }
    return this.outcomeWithCredentials(outcome, session);
  }

  private outcomeWithCredentials(outcome: DeliveryOutcome, session: Session | null): DeliveryOutcome {
    if (session?.refreshed) return { ...outcome, credentialsUpdate: { ...session.credentials } };
    return outcome;
  }

  private session(account: DeliveryAccount): Session | { problem: string } {
    const config = storedConfig(account.config);
    const credentials = storedCredentials(account.credentials);
    if (!config || !credentials) return { problem: 'the account has no valid LinkedIn credentials or authorUrn; reconnect it' };
    return {
      config,
      credentials,
      // An account stored before endpoints became operator-only may still carry apiBaseUrl /
      // oauthBaseUrl in its config: storedConfig() does not read them, so they are ignored here.
      api: this.config.linkedin.apiBaseUrl,
      oauth: this.config.linkedin.oauthBaseUrl,
      refreshed: false,
    };
  }

  private canRefresh(session: Session): boolean {
    return (
      session.credentials.refreshToken !== null && this.config.linkedin.clientId !== null && this.config.linkedin.clientSecret !== null
    );
  }

  private context(job: DeliveryJob | null, session: Session, step: string, url: string): LinkedInOutcomeContext {
    const c = session.credentials;
    let host: string;
    try {
      host = new URL(url).host;
    } catch {
      host = 'LinkedIn';
    }
    return {
      step,
      now: new Date(),
      apiVersion: this.config.linkedin.apiVersion,
      previousAttempt: job?.previousAttempt ?? null,
      secrets: [
        c.accessToken,
        ...(c.refreshToken ? [c.refreshToken] : []),
        ...(this.config.linkedin.clientSecret ? [this.config.linkedin.clientSecret] : []),
      ],
      excerptBytes: this.config.http.responseExcerptBytes,
      host,
      connectTimeoutMs: this.config.http.connectTimeoutMs,
      totalTimeoutMs: this.config.http.totalTimeoutMs,
    };
  }

  private authHeaders(session: Session): Record<string, string> {
    return { authorization: `Bearer ${session.credentials.accessToken}`, 'user-agent': USER_AGENT };
  }

  /** The versioned Rest.li headers every /rest/ call needs (learn.microsoft.com/linkedin/marketing/versioning). */
  private restHeaders(session: Session): Record<string, string> {
    return {
      ...this.authHeaders(session),
      'linkedin-version': this.config.linkedin.apiVersion,
      'x-restli-protocol-version': '2.0.0',
      'content-type': 'application/json',
    };
  }

  /**
   * `POST /oauth/v2/accessToken` with `grant_type=refresh_token` (Microsoft Learn, LinkedIn
   * authentication, "Programmatic refresh tokens"). Returns a failure outcome, or null after
   * storing the new tokens in the session. A refused refresh token is `auth`.
   */
  private async refresh(session: Session, job: DeliveryJob, signal: AbortSignal): Promise<DeliveryOutcome | null> {
    if (!this.canRefresh(session)) return null;
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: session.credentials.refreshToken!,
      client_id: this.config.linkedin.clientId!,
      client_secret: this.config.linkedin.clientSecret!,
    });
    const url = `${session.oauth}/oauth/v2/accessToken`;
    const res = await this.client.send({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT },
      body: form.toString(),
      signal,
      needBody: true,
    });
    const ctx = this.context(job, session, 'refreshing the access token', url);
    if (res.kind === 'network_error') return linkedinOutcome(res, ctx);
    if (res.status === 400 || res.status === 401) {
      return {
        ...linkedinOutcome(res, ctx),
        errorClass: 'auth',
        message: 'LinkedIn refused the refresh token (expired or revoked); reconnect the account',
      };
    }
    if (res.status !== 200) return linkedinOutcome(res, ctx);
    let body: { access_token?: unknown; expires_in?: unknown; refresh_token?: unknown };
    try {
      body = JSON.parse(res.body.toString('utf8')) as typeof body;
    } catch {
      body = {};
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      return {
        ...linkedinOutcome({ ...res, status: 502 }, ctx),
        httpStatus: res.status,
        message: "LinkedIn's token answer had no access_token",
      };
    }
    session.credentials = {
      accessToken: body.access_token,
      // LinkedIn returns the refresh token again (its 365-day lifetime does not restart).
      refreshToken:
        typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : session.credentials.refreshToken,
      expiresAt: typeof body.expires_in === 'number' ? new Date(Date.now() + body.expires_in * 1000).toISOString() : null,
    };
    session.refreshed = true;
    return null;
  }

  /**
   * Uploads the images, then creates the post. The first failing step's outcome ends it.
   *
   * Every attempt uploads the post's images again, one after the other in the post's order (one
   * or up to 20): LinkedIn's image URNs are not kept between attempts, and an image uploaded by an
   * attempt that failed later stays unused at LinkedIn, attached to no post. Twenty images are 40
   * calls before the post's: all within the attempt's deadline (WORKER_ATTEMPT_TIMEOUT_MS).
   */
  private async publish(job: DeliveryJob, session: Session, signal: AbortSignal): Promise<DeliveryOutcome> {
    // The payload's order is the post's order (job.media holds the same items, each once).
    const media = job.payload.media.map((id) => job.media.find((m) => m.id === id)!);
    if (media.length > LINKEDIN_MAX_IMAGES) {
      return poisonOutcome(`LinkedIn takes at most ${LINKEDIN_MAX_IMAGES} images per post (this one has ${media.length})`);
    }
    try {
      const images: LinkedInImage[] = [];
      for (const [i, m] of media.entries()) {
        let bytes: Buffer;
        try {
          ({ bytes } = await toLinkedInImage(await m.read(), m.mimeType));
        } catch (err) {
          return poisonOutcome(`image ${i + 1} (${m.id}) could not be read: ${(err as Error).message}`);
        }
        images.push({ id: await this.uploadImage(session, bytes, i, media.length, signal), altText: m.alt });
      }
      const body = this.postBody(job, session, images);
      const step = 'creating the post';
      const url = `${session.api}/rest/posts`;
      const res = await this.client.send({ method: 'POST', url, headers: this.restHeaders(session), body: JSON.stringify(body), signal });
      const outcome = linkedinOutcome(res, this.context(job, session, step, url));
      if (outcome.errorClass === 'success' && outcome.remoteId === null && res.kind === 'response' && res.status === 201) {
        return { ...outcome, warnings: ['LinkedIn created the post but sent no x-restli-id header'] };
      }
      return outcome;
    } catch (err) {
      if (err instanceof StepFailed) return linkedinOutcome(err.result, this.context(job, session, err.step, err.url));
      throw err;
    }
  }

  /** Images API: initializeUpload, then PUT the bytes to the returned uploadUrl. Returns the image URN. */
  private async uploadImage(session: Session, bytes: Buffer, index: number, count: number, signal: AbortSignal): Promise<string> {
    const step = count > 1 ? `uploading image ${index + 1} of ${count}` : 'uploading the image';
    const initUrl = `${session.api}/rest/images?action=initializeUpload`;
    const init = await this.client.send({
      method: 'POST',
      url: initUrl,
      headers: this.restHeaders(session),
      body: JSON.stringify({ initializeUploadRequest: { owner: session.config.authorUrn } }),
      signal,
      needBody: true,
    });
    if (init.kind !== 'response' || init.status !== 200) throw new StepFailed(init, step, initUrl);
    let value: { uploadUrl?: unknown; image?: unknown } | undefined;
    try {
      value = (JSON.parse(init.body.toString('utf8')) as { value?: { uploadUrl?: unknown; image?: unknown } }).value;
    } catch {
      value = undefined;
    }
    if (typeof value?.uploadUrl !== 'string' || typeof value.image !== 'string') {
      throw new StepFailed({ ...init, status: 502 }, `${step} (initializeUpload answered without uploadUrl/image)`, initUrl);
    }
    const put = await this.client.send({
      method: 'PUT',
      url: value.uploadUrl,
      headers: { ...this.authHeaders(session), 'content-type': 'application/octet-stream' },
      body: bytes,
      signal,
    });
    if (put.kind !== 'response' || put.status < 200 || put.status > 299) throw new StepFailed(put, step, value.uploadUrl);
    return value.image;
  }

  /** The Posts API body (learn.microsoft.com/linkedin/marketing/community-management/shares/posts-api). */
  private postBody(job: DeliveryJob, session: Session, images: LinkedInImage[]): Record<string, unknown> {
    const p = job.payload;
    // One content per post (an article, one image or several): linkedin-content.ts.
    const content = linkedinContent(images, p.link, p.title);
    return {
      author: session.config.authorUrn,
      commentary: toLittleText(linkedinText(p.text, p.link, images.length)),
      visibility: 'PUBLIC',
      distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
      lifecycleState: 'PUBLISHED',
      isReshareDisabledByAuthor: false,
      ...(content ? { content } : {}),
    };
  }
}
