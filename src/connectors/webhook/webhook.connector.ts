import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { HttpResult, postJson } from '../../common/net/http-client';
import { assertPublicUrl, BlockedUrlError } from '../../common/net/ssrf-guard';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import {
  Connector,
  ConnectorInputError,
  DeliveryAccount,
  DeliveryJob,
  DeliveryOutcome,
  PreparedAccount,
  Provider,
  VerifyResult,
} from '../connector.interface';
import { parseWebhookInput, sameOrigin, storedHeaders, storedUrl, WebhookConfig, WebhookCredentials } from './webhook-config';
import { OutcomeContext, poisonOutcome, webhookOutcome } from './webhook-outcome';
import { buildPingEvent, buildPublishEvent, PayloadError } from './webhook-payload';
import { generateSigningSecret, isValidSigningSecret, signatureHeaders } from './webhook-signature';

/** What the connector reads from HeraldConfig (a plain EnvConfig from loadConfig() also fits). */
export type WebhookConnectorConfig = Pick<HeraldConfig, 'allowPrivateUrls' | 'http'>;

export const USER_AGENT = 'Herald/1.0';

/** A stored account resolved for sending, or the reason it cannot be sent to. */
type Target = { url: URL; secret: string; headers: Record<string, string> } | { problem: string };

/**
 * Blog webhooks: a signed JSON POST per attempt, Standard Webhooks headers plus an
 * `Idempotency-Key` that stays the same across the retries of a job.
 */
@Injectable()
export class WebhookConnector implements Connector {
  readonly provider: Provider = 'webhook';

  constructor(@Inject(HERALD_CONFIG) private readonly config: WebhookConnectorConfig) {}

  async prepareAccount(
    input: unknown,
    previous: Record<string, unknown> | null,
    previousConfig: Record<string, unknown> | null = null,
  ): Promise<PreparedAccount> {
    const parsed = parseWebhookInput(input);
    try {
      await assertPublicUrl(parsed.url, this.config.allowPrivateUrls);
    } catch (err) {
      if (err instanceof BlockedUrlError) throw new ConnectorInputError(`config.url ${err.message}`);
      throw err;
    }
    // A PATCH that keeps the URL's origin keeps the stored headers (unless it gives new ones) and
    // the signing secret (receivers verify with it; it changes through rotateSecret). A PATCH that
    // moves the account to another origin (scheme, host or port) carries neither there: the
    // stored headers (a blog's `Authorization: Bearer …`) are dropped unless given again, and a
    // new secret is made and shown once. Otherwise anyone who may edit an account could point it
    // at their own server, press Check, and read the write-only secrets it sends.
    const carried = previous !== null && sameOrigin(previousConfig?.url, parsed.url);
    const headers = parsed.headers ?? (carried ? storedHeaders(previous.headers) : {});
    const kept = carried && isValidSigningSecret(previous.secret) ? previous.secret : null;
    const secret = kept ?? generateSigningSecret();
    const config: WebhookConfig = { url: parsed.url, headerNames: Object.keys(headers) };
    const credentials: WebhookCredentials = { secret, headers };
    return {
      config: { ...config },
      credentials: { ...credentials },
      ...(kept === null ? { revealOnce: { secret } } : {}),
    };
  }

  /**
   * Only `credentials` and `revealOnce` are meaningful here: the stored config (URL, header names)
   * does not change, so `config` is empty and must not replace the stored one.
   */
  rotateSecret(previous: Record<string, unknown>): PreparedAccount {
    const secret = generateSigningSecret();
    const credentials: WebhookCredentials = { secret, headers: storedHeaders(previous.headers) };
    return { config: {}, credentials: { ...credentials }, revealOnce: { secret } };
  }

  async deliver(job: DeliveryJob, account: DeliveryAccount, signal: AbortSignal): Promise<DeliveryOutcome> {
    const target = this.target(account);
    if ('problem' in target) return poisonOutcome(target.problem);
    const now = new Date();
    let body: string;
    try {
      // An event endpoint's delivery sends the event as written with the change it reports
      // (docs/events.md); a post's job, the post.publish body built from its payload.
      body = JSON.stringify(job.payload.event ?? buildPublishEvent(job, now));
    } catch (err) {
      if (err instanceof PayloadError) return poisonOutcome(err.message);
      // JSON.stringify throws on a BigInt or a cycle: nothing that came through the API can do that.
      return poisonOutcome('the payload could not be serialised as JSON');
    }
    const result = await this.send(target, job.idempotencyKey, body, now, signal);
    // A Retry-After HTTP-date is read against the moment the answer came, not the send time.
    return webhookOutcome(result, this.outcomeContext(target, new Date()));
  }

  async verify(account: DeliveryAccount): Promise<VerifyResult> {
    const target = this.target(account);
    if ('problem' in target) return { ok: false, message: target.problem };
    const now = new Date();
    const id = `ping_${randomBytes(12).toString('hex')}`;
    const body = JSON.stringify(buildPingEvent(id, now));
    const result = await this.send(target, id, body, now);
    const outcome = webhookOutcome(result, this.outcomeContext(target, new Date()));
    const details = {
      httpStatus: outcome.httpStatus,
      networkError: outcome.networkError,
      latencyMs: result.latencyMs,
    };
    if (outcome.errorClass === 'success') {
      return { ok: true, message: `the endpoint answered ${outcome.httpStatus} in ${result.latencyMs} ms`, details };
    }
    return { ok: false, message: outcome.message ?? 'the endpoint did not accept the ping', details };
  }

  private target(account: DeliveryAccount): Target {
    const url = storedUrl(account.config);
    if (url === null) return { problem: 'the account has no valid webhook URL; edit the account' };
    const secret = account.credentials.secret;
    if (!isValidSigningSecret(secret)) {
      return { problem: 'the account has no valid signing secret; rotate the secret' };
    }
    return { url, secret, headers: storedHeaders(account.credentials.headers) };
  }

  private send(
    target: { url: URL; secret: string; headers: Record<string, string> },
    messageId: string,
    body: string,
    now: Date,
    signal?: AbortSignal,
  ): Promise<HttpResult> {
    const headers: Record<string, string> = {
      // Custom headers first: validation forbids the reserved names, and ours win regardless.
      ...target.headers,
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'idempotency-key': messageId,
      ...signatureHeaders(target.secret, messageId, now, body),
    };
    return postJson(target.url.href, body, headers, {
      connectTimeoutMs: this.config.http.connectTimeoutMs,
      totalTimeoutMs: this.config.http.totalTimeoutMs,
      excerptBytes: this.config.http.responseExcerptBytes,
      allowPrivate: this.config.allowPrivateUrls,
      signal,
    });
  }

  private outcomeContext(target: { url: URL; secret: string; headers: Record<string, string> }, now: Date): OutcomeContext {
    return {
      url: target.url,
      now,
      secrets: [target.secret, target.secret.replace(/^whsec_/, ''), ...Object.values(target.headers)],
      excerptBytes: this.config.http.responseExcerptBytes,
      connectTimeoutMs: this.config.http.connectTimeoutMs,
      totalTimeoutMs: this.config.http.totalTimeoutMs,
    };
  }
}
