import { Inject, Injectable } from '@nestjs/common';
import type { HttpResult } from '../../common/net/http-client';
import { untilAborted } from '../../common/net/deadline';
import { assertPublicUrl, BlockedUrlError } from '../../common/net/ssrf-guard';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import {
  Connector,
  ConnectorInputError,
  DeliveryAccount,
  DeliveryJob,
  DeliveryOutcome,
  NO_OUTCOME_DETAILS,
  payloadParts,
  PreparedAccount,
  Provider,
  PublishedPart,
  ThreadPart,
  VerifyResult,
} from '../connector.interface';
import { networkFailureOf, networkOutcome, poisonOutcome, redactSecrets } from '../outcome-kit';
import {
  errorMessage,
  MastodonAccount,
  MastodonStatus,
  parseAccount,
  parseInstanceLimits,
  parseJson,
  parseMedia,
  parseStatus,
  parseStatuses,
} from './mastodon-answers';
import { MastodonClient, MastodonRequest, mediaForm } from './mastodon-client';
import {
  handleOf,
  MastodonConfig,
  MastodonCredentials,
  MastodonLimits,
  parseMastodonInput,
  storedConfig,
  storedCredentials,
} from './mastodon-config';
import { CLOCK_MARGIN_MS, findPart, mayHavePublished, reachedBack } from './mastodon-lookup';
import { mastodonOutcome, MastodonOutcomeContext } from './mastodon-outcome';
import { partIdempotencyKey, statusText } from './mastodon-text';

/** What the connector reads from HeraldConfig (a plain EnvConfig from loadConfig() also fits). */
export type MastodonConnectorConfig = Pick<HeraldConfig, 'allowPrivateUrls' | 'http'>;

/** Statuses per page of the account's statuses (the most `GET /api/v1/accounts/:id/statuses` gives). */
const LOOKUP_PAGE_SIZE = 40;
/** Pages read at most when looking for a part an earlier attempt may have published: the 200 newest statuses. */
const LOOKUP_PAGES = 5;
/**
 * Waits between two looks at an image the instance is still processing (202, then `url: null`):
 * a quarter second first, doubling to 2 s, at most 60 s in all. The attempt's deadline ends the
 * wait sooner; a retry uploads the image again (an upload has no idempotency key; the instance
 * removes images no status uses).
 */
const MEDIA_POLL_FIRST_MS = 250;
const MEDIA_POLL_MAX_MS = 2_000;
const MEDIA_POLL_TOTAL_MS = 60_000;

/** An account resolved for calls: where, with which token, as whom. */
interface Session {
  config: MastodonConfig;
  token: string;
  host: string;
}

/** A step that failed, with the outcome that ends the attempt. */
class StepFailed extends Error {
  constructor(readonly outcome: DeliveryOutcome) {
    super(outcome.message ?? 'failed');
  }
}

/**
 * Mastodon, on any instance: `POST /api/v1/statuses` with the job's idempotency key as
 * `Idempotency-Key` (one key per part of a thread), images through `POST /api/v2/media` (polled
 * until processed), a thread as replies (`in_reply_to_id` = the previous part's status), each
 * published part recorded with the outcome so a retry never publishes it again. A retry first
 * looks for the part an earlier attempt may have published (mastodon-lookup.ts): the instance
 * remembers a key about an hour, the account's statuses for good.
 *
 * The instance's address is a workspace's choice: it is checked when saved (assertPublicUrl) and
 * every call goes through the guarded outbound layer (mastodon-client.ts), as webhooks do.
 */
@Injectable()
export class MastodonConnector implements Connector {
  readonly provider: Provider = 'mastodon';
  private readonly client: MastodonClient;

  constructor(@Inject(HERALD_CONFIG) private readonly config: MastodonConnectorConfig) {
    this.client = new MastodonClient({
      allowPrivate: config.allowPrivateUrls,
      connectTimeoutMs: config.http.connectTimeoutMs,
      totalTimeoutMs: config.http.totalTimeoutMs,
    });
  }

  /**
   * `{ instanceUrl, accessToken }`, checked before anything is saved: the address against the
   * SSRF guard, the token with `GET /api/v1/accounts/verify_credentials` (a refused token is a 400
   * that saves nothing), then the instance's limits from `/api/v2/instance`. The account's name
   * and handle come from the token's account.
   */
  async prepareAccount(
    input: unknown,
    _previous: Record<string, unknown> | null,
    previousConfig: Record<string, unknown> | null = null,
  ): Promise<PreparedAccount> {
    const kept = previousConfig ? (storedConfig(previousConfig)?.instanceUrl ?? null) : null;
    const { instanceUrl, accessToken } = parseMastodonInput(input, kept);
    try {
      await assertPublicUrl(instanceUrl, this.config.allowPrivateUrls);
    } catch (err) {
      if (err instanceof BlockedUrlError) throw new ConnectorInputError(`config.instanceUrl ${err.message}`);
      throw err;
    }
    const checked = await this.whoAmI(instanceUrl, accessToken);
    if ('problem' in checked) {
      throw new ConnectorInputError(`config.accessToken could not be checked, so nothing was saved: ${checked.problem}`);
    }
    const limits = await this.readLimits(instanceUrl);
    const config: MastodonConfig = {
      instanceUrl,
      ...identity(checked.account),
      limits,
      limitsReadAt: limits === null ? null : new Date().toISOString(),
    };
    const credentials: MastodonCredentials = { accessToken };
    const handle = handleOf(config) ?? checked.account.username;
    return { config: { ...config }, credentials: { ...credentials }, suggestedName: checked.account.displayName.trim() || handle };
  }

  /** The token against `verify_credentials`, and the instance's limits read again (stored with the account by the caller). */
  async verify(account: DeliveryAccount): Promise<VerifyResult> {
    const session = this.session(account);
    if ('problem' in session) return { ok: false, message: session.problem };
    const checked = await this.whoAmI(session.config.instanceUrl, session.token);
    if ('problem' in checked) return { ok: false, message: checked.problem, details: checked.details };
    const limits = await this.readLimits(session.config.instanceUrl);
    const who = handleOf({ instanceUrl: session.config.instanceUrl, username: checked.account.username }) ?? checked.account.username;
    const counted = limits ?? session.config.limits;
    return {
      ok: true,
      message: `the token is valid and posts as ${who}${counted ? `; statuses up to ${counted.maxCharacters} characters` : ''}${limits === null ? ` (${session.host} did not say its limits: Herald counts with ${counted?.maxCharacters ?? 500})` : ''}`,
      details: { httpStatus: 200, accountId: checked.account.id, username: checked.account.username },
      configUpdate: {
        ...identity(checked.account),
        ...(limits ? { limits, limitsReadAt: new Date().toISOString() } : {}),
      },
    };
  }

  async deliver(job: DeliveryJob, account: DeliveryAccount, signal: AbortSignal): Promise<DeliveryOutcome> {
    const session = this.session(account);
    if ('problem' in session) return { ...poisonOutcome(session.problem), errorClass: 'auth' };
    const parts = payloadParts(job.payload);
    const missing = parts.flatMap((p) => p.media).filter((id) => !job.media.some((m) => m.id === id));
    if (missing.length > 0) {
      return poisonOutcome(`media ${missing.join(', ')} no longer exists; edit the post's media in the dead-letter queue`);
    }
    const thread = parts.length > 1;
    const done = publishedPrefix(job.published ?? []);
    const warnings: string[] = [];
    try {
      await this.publish(job, session, parts, done, warnings, signal);
    } catch (err) {
      const failed = err instanceof StepFailed ? err.outcome : this.thrown(err, session);
      return {
        ...failed,
        message: withProgress(failed.message, done, parts.length),
        ...(thread ? { parts: [...done] } : {}),
        ...(warnings.length > 0 ? { warnings } : {}),
      };
    }
    const first = done[0];
    return {
      ...NO_OUTCOME_DETAILS,
      errorClass: 'success',
      httpStatus: 200,
      remoteId: first.uri,
      remoteUrl: first.url,
      ...(thread ? { parts: [...done] } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  }

  /**
   * Every part not yet in `done`, in order (docs/api.md "Threads"). On a retry, the first parts
   * not in `done` are looked up first (an earlier attempt may have published them and lost the
   * answer); once one is not found, the later ones cannot have been published either.
   */
  private async publish(
    job: DeliveryJob,
    session: Session,
    parts: ThreadPart[],
    done: PublishedPart[],
    warnings: string[],
    signal: AbortSignal,
  ): Promise<void> {
    const thread = parts.length > 1;
    const media = new Map(job.media.map((m) => [m.id, m]));
    const options = job.payload.mastodon ?? { visibility: null, spoilerText: null };
    let look = mayHavePublished(job);
    for (let index = done.length; index < parts.length; index++) {
      const part = parts[index];
      const label = thread ? `part ${index + 1} of ${parts.length}` : 'the status';
      const text = statusText(part.text, part.link);
      const replyTo = index > 0 ? { id: done[index - 1].uri, label: `part ${index}` } : null;
      const keep = (status: MastodonStatus): void => {
        done.push({ index, uri: status.id, cid: '', url: status.url });
      };
      if (look) {
        const found = await this.lookUp(
          job,
          session,
          { text, spoilerText: options.spoilerText ?? '', inReplyToId: replyTo?.id ?? null },
          label,
          warnings,
          signal,
        );
        if (found) {
          warnings.push(
            `${label} was already published by an earlier attempt whose answer was lost (status ${found.id}): kept, not posted again`,
          );
          keep(found);
          continue;
        }
        look = false;
      }
      const mediaIds: string[] = [];
      for (const [i, id] of part.media.entries()) {
        const item = media.get(id)!;
        const step = thread ? `uploading image ${i + 1} of ${label}` : `uploading image ${i + 1}`;
        mediaIds.push(await this.upload(session, item.read.bind(item), item.mimeType, item.alt, step, signal));
      }
      const step = `creating ${label}`;
      const body = {
        status: text,
        ...(mediaIds.length > 0 ? { media_ids: mediaIds } : {}),
        ...(replyTo ? { in_reply_to_id: replyTo.id } : {}),
        ...(options.spoilerText ? { spoiler_text: options.spoilerText } : {}),
        ...(options.visibility ? { visibility: options.visibility } : {}),
      };
      const res = await this.call(
        session,
        {
          method: 'POST',
          path: '/api/v1/statuses',
          json: body,
          headers: { 'idempotency-key': partIdempotencyKey(job.idempotencyKey, index, thread) },
          signal,
        },
        step,
        replyTo,
      );
      const status = parseStatus(parseJson(res.body));
      if (status === null) throw new StepFailed(this.unreadable(res, step, session, 'a status without an id'));
      keep(status);
    }
  }

  /**
   * The part among the account's own statuses since the job was scheduled, newest first, at
   * most LOOKUP_PAGES pages: null when it is not there. A failed look ends the attempt (its
   * outcome is the lookup's): posting without knowing could publish the part twice.
   */
  private async lookUp(
    job: DeliveryJob,
    session: Session,
    part: { text: string; spoilerText: string; inReplyToId: string | null },
    label: string,
    warnings: string[],
    signal: AbortSignal,
  ): Promise<MastodonStatus | null> {
    const step = `looking for ${label} among the account's statuses (an earlier attempt may have published it)`;
    const accountId = session.config.accountId ?? (await this.accountIdOf(session, step, signal));
    const notBefore = new Date(new Date(job.payload.scheduledAt).getTime() - CLOCK_MARGIN_MS);
    let maxId: string | null = null;
    for (let page = 0; page < LOOKUP_PAGES; page++) {
      const query = `limit=${LOOKUP_PAGE_SIZE}&exclude_reblogs=true${maxId ? `&max_id=${encodeURIComponent(maxId)}` : ''}`;
      const res = await this.call(
        session,
        { method: 'GET', path: `/api/v1/accounts/${encodeURIComponent(accountId)}/statuses?${query}`, signal },
        step,
      );
      const statuses = parseStatuses(parseJson(res.body));
      if (statuses === null) throw new StepFailed(this.unreadable(res, step, session, 'not a list of statuses'));
      const found = findPart(statuses, { ...part, notBefore });
      if (found) return found;
      if (reachedBack(statuses, LOOKUP_PAGE_SIZE, notBefore)) return null;
      maxId = statuses[statuses.length - 1].id;
    }
    warnings.push(
      `${label}: the account's ${LOOKUP_PAGES * LOOKUP_PAGE_SIZE} newest statuses do not reach back to when this job was scheduled; it was sent again with its idempotency key, which the instance honours for about an hour`,
    );
    return null;
  }

  /** The account's id on its instance, for a config stored without one. */
  private async accountIdOf(session: Session, step: string, signal: AbortSignal): Promise<string> {
    const res = await this.call(session, { method: 'GET', path: '/api/v1/accounts/verify_credentials', signal }, step);
    const account = parseAccount(parseJson(res.body));
    if (account === null) throw new StepFailed(this.unreadable(res, step, session, 'no account id'));
    return account.id;
  }

  /**
   * `POST /api/v2/media` (multipart `file` and `description`, the alt text). 200: processed, it has
   * a `url`; 202: still processing (`url: null`): `GET /api/v1/media/:id` until it has one (206
   * while processing), waiting a little longer each time, within the attempt's deadline.
   */
  private async upload(
    session: Session,
    read: () => Promise<Buffer>,
    mimeType: string,
    alt: string,
    step: string,
    signal: AbortSignal,
  ): Promise<string> {
    let bytes: Buffer;
    try {
      bytes = await read();
    } catch (err) {
      throw new StepFailed(poisonOutcome(`${step}: the image could not be read: ${(err as Error).message}`));
    }
    const res = await this.call(
      session,
      { method: 'POST', path: '/api/v2/media', multipart: await mediaForm(bytes, mimeType, alt), signal },
      step,
    );
    const media = parseMedia(parseJson(res.body));
    if (media === null) throw new StepFailed(this.unreadable(res, step, session, 'no media id'));
    if (media.url !== null) return media.id;
    const waitStep = `${step}: waiting for the instance to process it`;
    let waited = 0;
    for (let delay = MEDIA_POLL_FIRST_MS; waited < MEDIA_POLL_TOTAL_MS; delay = Math.min(delay * 2, MEDIA_POLL_MAX_MS)) {
      await this.sleep(delay, signal);
      waited += delay;
      const check = await this.call(session, { method: 'GET', path: `/api/v1/media/${encodeURIComponent(media.id)}`, signal }, waitStep);
      const processed = parseMedia(parseJson(check.body));
      if (check.status === 200 && processed?.url) return media.id;
    }
    throw new StepFailed({
      ...NO_OUTCOME_DETAILS,
      errorClass: 'transient',
      message: `${session.host} was still processing the image after ${MEDIA_POLL_TOTAL_MS / 1000} s (${step}); it is uploaded again on the next attempt`,
    });
  }

  /** One call; a non-2xx answer or a failure without one ends the attempt with its outcome. */
  private async call(
    session: Session,
    req: Omit<MastodonRequest, 'instanceUrl' | 'token'>,
    step: string,
    replyTo: { id: string; label: string } | null = null,
  ): Promise<HttpResult & { kind: 'response' }> {
    const res = await this.client.send({ ...req, instanceUrl: session.config.instanceUrl, token: session.token });
    if (res.kind === 'response' && res.status >= 200 && res.status <= 299) return res;
    throw new StepFailed(mastodonOutcome(res, this.context(session.host, session.token, step, replyTo)));
  }

  /** A wait that ends the attempt when its signal fires (deadline or shutdown). */
  private async sleep(ms: number, signal: AbortSignal): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await untilAborted(
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, ms);
        }),
        signal,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** The outcome of something thrown where an outcome was expected: a cut wait, or a bug said plainly. */
  private thrown(err: unknown, session: Session): DeliveryOutcome {
    const failure = networkFailureOf(err);
    if (failure) return networkOutcome(failure, this.context(session.host, session.token, 'waiting for the instance', null));
    throw err;
  }

  /** A 2xx whose body is not what the call returns: the instance (or something in front of it) is broken; retried. */
  private unreadable(res: HttpResult & { kind: 'response' }, step: string, session: Session, what: string): DeliveryOutcome {
    return {
      ...mastodonOutcome({ ...res, status: 502 }, this.context(session.host, session.token, step, null)),
      httpStatus: res.status,
      message: `${session.host} answered ${res.status} with ${what} while ${step}`,
    };
  }

  private context(host: string, token: string, step: string, replyTo: { id: string; label: string } | null): MastodonOutcomeContext {
    return {
      step,
      now: new Date(),
      secrets: [token],
      excerptBytes: this.config.http.responseExcerptBytes,
      host,
      connectTimeoutMs: this.config.http.connectTimeoutMs,
      totalTimeoutMs: this.config.http.totalTimeoutMs,
      replyTo,
    };
  }

  private session(account: DeliveryAccount): Session | { problem: string } {
    const config = storedConfig(account.config);
    const credentials = storedCredentials(account.credentials);
    if (!config || !credentials) return { problem: 'the account has no valid Mastodon instance or access token; reconnect it' };
    return { config, token: credentials.accessToken, host: new URL(config.instanceUrl).host };
  }

  /** `GET /api/v1/accounts/verify_credentials`: who the token posts as, or why it cannot be known. */
  private async whoAmI(
    instanceUrl: string,
    token: string,
  ): Promise<{ account: MastodonAccount } | { problem: string; details: Record<string, unknown> }> {
    const host = new URL(instanceUrl).host;
    const res = await this.client.send({ method: 'GET', instanceUrl, path: '/api/v1/accounts/verify_credentials', token });
    const ctx = this.context(host, token, 'checking the access token', null);
    if (res.kind === 'network_error') {
      const o = mastodonOutcome(res, ctx);
      return { problem: `${host} could not be reached: ${o.message ?? res.code}`, details: { networkError: o.networkError } };
    }
    if (res.status === 401 || res.status === 403) {
      const said = errorMessage(parseJson(res.body));
      return {
        problem: `${host} refused the access token (${res.status}${said ? `: ${redactSecrets(said.slice(0, 200), [token])}` : ''}); create a new one with the write:statuses, write:media and read:accounts scopes`,
        details: { httpStatus: res.status, errorClass: 'auth' },
      };
    }
    const account = res.status === 200 ? parseAccount(parseJson(res.body)) : null;
    if (account === null) {
      const o = mastodonOutcome(res.status === 200 ? { ...res, status: 502 } : res, ctx);
      return {
        problem:
          res.status === 200
            ? `${host} answered verify_credentials without an account: is it a Mastodon instance?`
            : (o.message ?? `HTTP ${res.status}`),
        details: { httpStatus: res.status },
      };
    }
    return { account };
  }

  /** The instance's limits (`GET /api/v2/instance`, no token needed), or null when it does not say them. */
  private async readLimits(instanceUrl: string): Promise<MastodonLimits | null> {
    const res = await this.client.send({ method: 'GET', instanceUrl, path: '/api/v2/instance', token: null });
    if (res.kind !== 'response' || res.status !== 200) return null;
    return parseInstanceLimits(parseJson(res.body));
  }
}

/** The identity fields of the config, from the token's account. */
function identity(account: MastodonAccount): Pick<MastodonConfig, 'accountId' | 'username' | 'displayName' | 'profileUrl'> {
  return { accountId: account.id, username: account.username, displayName: account.displayName, profileUrl: account.url };
}

/** The published parts as a contiguous run from the first (an entry past a gap could not be replied to). */
function publishedPrefix(parts: readonly PublishedPart[]): PublishedPart[] {
  const byIndex = new Map(parts.map((p) => [p.index, p]));
  const out: PublishedPart[] = [];
  for (let i = 0; byIndex.has(i); i++) out.push(byIndex.get(i)!);
  return out;
}

/** A failure message of a thread that says how far it got: the person sees what is already out. */
function withProgress(message: string | null, done: readonly PublishedPart[], total: number): string | null {
  if (done.length === 0 || total < 2) return message;
  const range = done.length === 1 ? 'part 1' : `parts 1–${done.length}`;
  return `${message ?? 'failed'}; ${range} of ${total} published (a retry or requeue continues with part ${done.length + 1})`;
}
