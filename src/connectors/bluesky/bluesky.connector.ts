import { Inject, Injectable, Optional } from '@nestjs/common';
import type { AppBskyFeedPost } from '@atproto/api';
import { guardedFetch } from '../../common/net/guarded-fetch';
import { assertPublicUrl, BlockedUrlError } from '../../common/net/ssrf-guard';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import {
  Connector,
  ConnectorInputError,
  DeliveryAccount,
  DeliveryJob,
  DeliveryOutcome,
  PayloadMedia,
  payloadParts,
  PreparedAccount,
  Provider,
  PublishedPart,
  VerifyResult,
} from '../connector.interface';
import type { BlueskyAuth } from './bluesky-auth';
import {
  BlueskyConfig,
  BlueskyCredentials,
  parseBlueskyInput,
  readOAuthAccount,
  readStoredAccount,
  StoredOAuthAccount,
  StoredSession,
} from './bluesky-config';
import { isXrpcError } from './atproto';
import { blueskyErrorOutcome, BlueskyOutcomeContext, blueskyPoison, blueskySuccess, postUrl, xrpcStatus } from './bluesky-outcome';
import { buildPost, PoisonError, POST_COLLECTION } from './bluesky-post';
import { BlueskySessions } from './bluesky-session';
import { blueskyOAuthErrorOutcome, BlueskyOAuthSession } from './oauth/bluesky-oauth-session';
import { BlueskyOAuth } from './oauth/bluesky-oauth.service';
import { tidForJob, tidForThreadPart } from './tid';

export type BlueskyConnectorConfig = Pick<HeraldConfig, 'allowPrivateUrls' | 'http'>;

/** PDS answers are small JSON; a cap keeps a misbehaving server from filling memory. */
const MAX_PDS_ANSWER_BYTES = 5 * 1024 * 1024;

/** The record at a job's key, if there is one: a retry after a lost response finds it there. */
interface ExistingPost {
  uri: string;
  cid: string | null;
  text: string;
  /** The thread's first record, when the record is a reply. */
  rootUri: string | null;
}

/**
 * Bluesky through `@atproto/api`. Each job writes its post with
 * `com.atproto.repo.createRecord` under a record key derived from the job (tid.ts), so every
 * attempt of a job targets the same record: a retry after a lost answer finds the post already
 * there and succeeds with its URI instead of posting twice.
 *
 * Every XRPC call, the link page and its image go through the outbound layer with the attempt's
 * signal, so the attempt ends at its deadline, whichever call it is in.
 */
@Injectable()
export class BlueskyConnector implements Connector {
  readonly provider: Provider = 'bluesky';
  readonly sessions: BlueskySessions;

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: BlueskyConnectorConfig,
    @Optional() private readonly oauth?: BlueskyOAuth,
  ) {
    this.sessions = new BlueskySessions(
      guardedFetch({
        connectTimeoutMs: config.http.connectTimeoutMs,
        totalTimeoutMs: config.http.totalTimeoutMs,
        maxBodyBytes: MAX_PDS_ANSWER_BYTES,
        allowPrivate: config.allowPrivateUrls,
      }),
    );
  }

  /**
   * No network call here: the app password is checked by `verify` and by the first post, so an
   * account can be saved while its PDS is down and a save never spends one of the account's
   * logins. Saving new config drops the stored session (it belonged to the old password).
   */
  async prepareAccount(input: unknown, previous: Record<string, unknown> | null): Promise<PreparedAccount> {
    const ticket = oauthTicketOf(input);
    if (ticket !== null) return this.prepareOAuthAccount(ticket, previous);
    const parsed = parseBlueskyInput(input);
    try {
      await assertPublicUrl(parsed.service, this.config.allowPrivateUrls);
    } catch (err) {
      if (err instanceof BlockedUrlError) throw new ConnectorInputError(`config.service ${err.message}`);
      throw err;
    }
    const config: BlueskyConfig = { identifier: parsed.identifier, service: parsed.service };
    const credentials: BlueskyCredentials = { appPassword: parsed.appPassword, session: null };
    return { config: { ...config }, credentials: { ...credentials } };
  }

  /**
   * An account connected on the settings page ("Connect with Bluesky"): the callback hands the
   * new session over as a one-use ticket of this process (BlueskyOAuth.issueTicket), never as
   * anything a client of the API could name.
   */
  private prepareOAuthAccount(ticket: string, previous: Record<string, unknown> | null): PreparedAccount {
    const replaced = previous ? readOAuthAccount({}, previous) : null;
    const connected = this.oauth?.redeemTicket(ticket, replaced?.oauth ?? null) ?? null;
    if (connected === null) {
      throw new ConnectorInputError('config.oauthTicket is unknown or expired: connect with Bluesky on the settings page');
    }
    const config: BlueskyConfig = {
      identifier: connected.handle,
      service: connected.service,
      did: connected.did,
      handle: connected.handle,
      auth: 'oauth',
    };
    return { config: { ...config }, credentials: { oauth: { sessionId: connected.sessionId, did: connected.did } } };
  }

  /** The session an OAuth account's attempt goes through. */
  private oauthSession(stored: StoredOAuthAccount): BlueskyOAuthSession | null {
    const oauth = this.oauth;
    if (!oauth) return null;
    return new BlueskyOAuthSession(() => oauth.restore(stored.oauth), stored.oauth.did, stored.config.handle);
  }

  private oauthContext(config: BlueskyConfig): BlueskyOutcomeContext {
    return {
      host: this.host(config),
      now: new Date(),
      excerptBytes: this.config.http.responseExcerptBytes,
      secrets: [],
      connectTimeoutMs: this.config.http.connectTimeoutMs,
      totalTimeoutMs: this.config.http.totalTimeoutMs,
    };
  }

  async verify(account: DeliveryAccount): Promise<VerifyResult> {
    const viaOAuth = readOAuthAccount(account.config, account.credentials);
    if (viaOAuth) return this.verifyOAuth(viaOAuth);
    const stored = readStoredAccount(account.config, account.credentials);
    if ('problem' in stored) return { ok: false, message: stored.problem };
    const session = this.sessions.for(account.id, stored.config, stored.credentials);
    try {
      // Reuses the stored session (refreshing it if it expired) and logs in only without one.
      const res = await session.call((agent) => agent.com.atproto.server.getSession());
      const { did, handle } = res.data;
      return { ok: true, message: `logged in to ${this.host(stored.config)} as @${handle} (${did})`, details: { did, handle } };
    } catch (err) {
      const outcome = blueskyErrorOutcome(err, 'logging in', this.outcomeContext(stored.config, stored.credentials, session));
      return {
        ok: false,
        message: outcome.message ?? 'the credentials were not accepted',
        details: { errorClass: outcome.errorClass, httpStatus: outcome.httpStatus, networkError: outcome.networkError },
      };
    }
  }

  private async verifyOAuth(stored: StoredOAuthAccount): Promise<VerifyResult> {
    const session = this.oauthSession(stored);
    if (!session) return { ok: false, message: 'Bluesky OAuth is not available in this process' };
    try {
      // Restoring refreshes the tokens when they are (nearly) expired; describeRepo then proves
      // the PDS serves the account. getSession would need more than the posting scopes.
      await session.ensure();
      await session.call((agent) => agent.com.atproto.repo.describeRepo({ repo: stored.oauth.did }));
      return {
        ok: true,
        message: `connected to ${this.host(stored.config)} with OAuth as @${stored.config.handle} (${stored.oauth.did})`,
        details: { did: stored.oauth.did, handle: stored.config.handle },
      };
    } catch (err) {
      const outcome = blueskyOAuthErrorOutcome(err, 'checking the session', this.oauthContext(stored.config));
      return {
        ok: false,
        message: outcome.message ?? 'the session was not accepted',
        details: { errorClass: outcome.errorClass, httpStatus: outcome.httpStatus, networkError: outcome.networkError },
      };
    }
  }

  async deliver(job: DeliveryJob, account: DeliveryAccount, signal: AbortSignal): Promise<DeliveryOutcome> {
    const viaOAuth = readOAuthAccount(account.config, account.credentials);
    if (viaOAuth) {
      const session = this.oauthSession(viaOAuth);
      if (!session) return blueskyPoison('Bluesky OAuth is not available in this process');
      // The library stores refreshed tokens itself: nothing to hand back to the worker.
      return this.attempt(job, session, signal, (err, step) => blueskyOAuthErrorOutcome(err, step, this.oauthContext(viaOAuth.config)));
    }
    const stored = readStoredAccount(account.config, account.credentials);
    if ('problem' in stored) return blueskyPoison(stored.problem);
    const session = this.sessions.for(account.id, stored.config, stored.credentials);
    const outcome = await this.attempt(job, session, signal, (err, step) =>
      blueskyErrorOutcome(err, step, this.outcomeContext(stored.config, stored.credentials, session)),
    );
    return withSessionUpdate(outcome, stored.credentials, session.current());
  }

  /** One attempt through `session`; `failed` classifies what a step threw. */
  private async attempt(
    job: DeliveryJob,
    session: BlueskyAuth,
    signal: AbortSignal,
    failed: (err: unknown, step: string) => DeliveryOutcome,
  ): Promise<DeliveryOutcome> {
    let step = 'logging in';
    const onStep = (s: string): void => {
      step = s;
    };
    if (job.payload.thread && job.payload.thread.length > 0) {
      // The parts published so far, this attempt's included: recorded with the outcome, whatever it is.
      const done = publishedPrefix(job.published ?? []);
      try {
        return await this.publishThread(job, session, done, signal, onStep);
      } catch (err) {
        const outcome = err instanceof PoisonError ? blueskyPoison(err.message) : failed(err, step);
        return { ...outcome, message: withProgress(outcome.message, done, payloadParts(job.payload).length), parts: [...done] };
      }
    }
    const rkey = tidForJob(job.idempotencyKey, job.payload.scheduledAt);
    try {
      return await this.publish(job, session, rkey, signal, onStep);
    } catch (err) {
      return err instanceof PoisonError ? blueskyPoison(err.message) : failed(err, step);
    }
  }

  /**
   * A thread (docs/api.md "Threads"): one record per part, in order, each a reply whose root is the
   * first record and whose parent is the previous one (strong references: uri and cid). Each
   * part's record key is fixed by the job and the part's index (tidForThreadPart) before its first
   * attempt, so:
   * - parts in `done` (jobs.parts, from earlier attempts) are never sent again;
   * - on a retry, the first parts not in `done` are looked up at their keys first: a part whose
   *   answer was lost (or whose attempt's outcome was never recorded) is found there and kept;
   * - a create refused because the key is taken is looked up the same way before it counts as
   *   a failure.
   * `done` grows as parts are published; the caller records it with the outcome.
   */
  private async publishThread(
    job: DeliveryJob,
    session: BlueskyAuth,
    done: PublishedPart[],
    signal: AbortSignal,
    onStep: (step: string) => void,
  ): Promise<DeliveryOutcome> {
    const { did } = await session.ensure(signal);
    const handle = (): string => session.current()?.handle ?? '';
    const parts = payloadParts(job.payload);
    const media = new Map(job.media.map((m) => [m.id, m]));
    const warnings: string[] = [];
    const preview = {
      connectTimeoutMs: this.config.http.connectTimeoutMs,
      totalTimeoutMs: this.config.http.totalTimeoutMs,
      allowPrivate: this.config.allowPrivateUrls,
      signal,
    };
    // Only a retry can find its own parts already there; once one is missing, the later ones are too.
    let look = job.attemptNumber > 1;
    for (let index = done.length; index < parts.length; index++) {
      const part = parts[index];
      const label = `part ${index + 1} of ${parts.length}`;
      const rkey = tidForThreadPart(job.id, index, job.payload.scheduledAt);
      const keep = (uri: string, cid: string): void => {
        done.push({ index, uri, cid, url: postUrl(handle(), did, rkey) });
      };
      if (look) {
        onStep(`looking for ${label} of an earlier attempt`);
        const existing = await this.existing(session, did, rkey, signal);
        const found = existing ? this.threadPartFound(existing, part.text, index, label, done) : null;
        if (existing && found) {
          warnings.push(...found.warnings);
          keep(existing.uri, found.cid);
          continue;
        }
        look = false;
      }
      const partJob: DeliveryJob = {
        ...job,
        payload: { ...job.payload, text: part.text, link: part.link, media: part.media, title: index === 0 ? job.payload.title : null },
        media: part.media.map((id) => media.get(id)).filter((m): m is PayloadMedia => m !== undefined),
      };
      delete partJob.payload.thread;
      const built = await buildPost(partJob, new Date(), { session, preview, signal, onStep: (s) => onStep(`${s} (${label})`) });
      warnings.push(...built.warnings.map((w) => `${label}: ${w}`));
      const record = {
        ...built.record,
        ...(index > 0 ? { reply: { root: strongRef(done[0]), parent: strongRef(done[index - 1]) } } : {}),
      };
      onStep(`creating ${label}`);
      try {
        const res = await session.call(
          (agent) => agent.com.atproto.repo.createRecord({ repo: did, collection: POST_COLLECTION, rkey, record }, { signal }),
          signal,
        );
        keep(res.data.uri, res.data.cid);
      } catch (err) {
        // As for a single post: "a record is already at this key" is looked at before it counts.
        if (!isXrpcError(err) || !(xrpcStatus(err) === 400 || xrpcStatus(err) >= 500)) throw err;
        onStep(`looking for an existing ${label} at its record key`);
        const existing = await this.existing(session, did, rkey, signal).catch(() => null);
        const found = existing ? this.threadPartFound(existing, part.text, index, label, done) : null;
        if (!existing || !found) {
          onStep(`creating ${label}`);
          throw err;
        }
        warnings.push(...found.warnings);
        keep(existing.uri, found.cid);
      }
    }
    const first = done[0];
    return {
      ...blueskySuccess(first.uri, handle(), did, tidForThreadPart(job.id, 0, job.payload.scheduledAt), warnings),
      parts: [...done],
    };
  }

  /**
   * Whether the record found at a part's key is that part, published by an earlier attempt whose
   * answer was lost. Its text must match, as for a single post; a later part whose text differs
   * (edited in the dead-letter queue after its answer was lost) is still this thread's when it
   * replies to this thread's first record: it is kept, with a warning, and not published twice.
   */
  private threadPartFound(
    existing: ExistingPost,
    text: string,
    index: number,
    label: string,
    done: PublishedPart[],
  ): { cid: string; warnings: string[] } | null {
    if (existing.cid === null) return null;
    const lost = `${label} was already published by an earlier attempt whose answer was lost`;
    if (existing.text.startsWith(text.trimEnd().slice(0, 200))) return { cid: existing.cid, warnings: [lost] };
    if (index > 0 && existing.rootUri !== null && existing.rootUri === done[0]?.uri) {
      return {
        cid: existing.cid,
        warnings: [`${lost}, with the text it had then (${existing.uri}): the later edit was not applied to it`],
      };
    }
    throw new ThreadKeyTakenError(
      `another post already uses the record key of ${label} (${existing.uri}); discard this job and post the thread again`,
    );
  }

  private async publish(
    job: DeliveryJob,
    session: BlueskyAuth,
    rkey: string,
    signal: AbortSignal,
    onStep: (step: string) => void,
  ): Promise<DeliveryOutcome> {
    const { did } = await session.ensure(signal);
    const handle = (): string => session.current()?.handle ?? '';
    // A retry: the earlier attempt may have written the post and lost the answer.
    if (job.attemptNumber > 1) {
      onStep('looking for the post of an earlier attempt');
      const existing = await this.existing(session, did, rkey, signal);
      if (existing) return this.foundExisting(existing, job, did, handle(), rkey, []);
    }
    const preview = {
      connectTimeoutMs: this.config.http.connectTimeoutMs,
      totalTimeoutMs: this.config.http.totalTimeoutMs,
      allowPrivate: this.config.allowPrivateUrls,
      signal,
    };
    const { record, warnings } = await buildPost(job, new Date(), { session, preview, signal, onStep });
    onStep('creating the post');
    try {
      const res = await session.call(
        (agent) => agent.com.atproto.repo.createRecord({ repo: did, collection: POST_COLLECTION, rkey, record: { ...record } }, { signal }),
        signal,
      );
      return blueskySuccess(res.data.uri, handle(), did, rkey, warnings);
    } catch (err) {
      // A refusal may be "there is already a record at this key" (a PDS answers it as a 400
      // InvalidRequest or, in some versions, a 500): look before classifying.
      if (!isXrpcError(err) || !(xrpcStatus(err) === 400 || xrpcStatus(err) >= 500)) throw err;
      onStep('looking for an existing post at this record key');
      const existing = await this.existing(session, did, rkey, signal).catch(() => null);
      if (existing) return this.foundExisting(existing, job, did, handle(), rkey, warnings);
      throw err;
    }
  }

  private foundExisting(
    existing: ExistingPost,
    job: DeliveryJob,
    did: string,
    handle: string,
    rkey: string,
    warnings: string[],
  ): DeliveryOutcome {
    // The key is derived from this job, so a record there is this job's post. The text check
    // guards against the (one in a million) chance that two jobs hashed to the same key.
    if (!existing.text.startsWith(job.payload.text.trimEnd().slice(0, 200))) {
      return {
        ...blueskyPoison(
          `another post already uses this job's record key ${rkey} (${existing.uri}); requeue the job after editing it to get a new key`,
        ),
        errorClass: 'permanent',
      };
    }
    return blueskySuccess(existing.uri, handle, did, rkey, [
      ...warnings,
      'the post was already published by an earlier attempt whose answer was lost',
    ]);
  }

  private async existing(session: BlueskyAuth, did: string, rkey: string, signal: AbortSignal): Promise<ExistingPost | null> {
    try {
      const res = await session.call(
        (agent) => agent.com.atproto.repo.getRecord({ repo: did, collection: POST_COLLECTION, rkey }, { signal }),
        signal,
      );
      const value = res.data.value as Partial<AppBskyFeedPost.Record>;
      return {
        uri: res.data.uri,
        cid: res.data.cid ?? null,
        text: typeof value.text === 'string' ? value.text : '',
        rootUri: typeof value.reply?.root?.uri === 'string' ? value.reply.root.uri : null,
      };
    } catch (err) {
      // 400 RecordNotFound (older PDS versions answer a missing record with 400 InvalidRequest too).
      if (isXrpcError(err) && [400, 404].includes(xrpcStatus(err))) return null;
      throw err;
    }
  }

  private host(config: BlueskyConfig): string {
    try {
      return new URL(config.service).host;
    } catch {
      return config.service;
    }
  }

  private outcomeContext(
    config: BlueskyConfig,
    credentials: BlueskyCredentials,
    session: { current(): StoredSession | null },
  ): BlueskyOutcomeContext {
    const current = session.current();
    const tokens = [credentials.session, current].flatMap((s) => (s ? [s.accessJwt, s.refreshJwt] : []));
    return {
      host: this.host(config),
      now: new Date(),
      excerptBytes: this.config.http.responseExcerptBytes,
      secrets: [credentials.appPassword, ...tokens],
      connectTimeoutMs: this.config.http.connectTimeoutMs,
      totalTimeoutMs: this.config.http.totalTimeoutMs,
    };
  }
}

/** A record key taken by another post: nothing this job can publish there (poison, as for a single post). */
class ThreadKeyTakenError extends PoisonError {}

/** The published parts as a contiguous run from the first (an entry past a gap could not be replied to). */
function publishedPrefix(parts: PublishedPart[]): PublishedPart[] {
  const byIndex = new Map(parts.map((p) => [p.index, p]));
  const out: PublishedPart[] = [];
  for (let i = 0; byIndex.has(i); i++) out.push(byIndex.get(i)!);
  return out;
}

/** app.bsky.feed.post's reply refs: a strong reference (uri and cid) to a published part. */
function strongRef(part: PublishedPart): { uri: string; cid: string } {
  return { uri: part.uri, cid: part.cid };
}

/** A failure message of a thread that says how far it got: the person sees what is already out. */
function withProgress(message: string | null, done: PublishedPart[], total: number): string | null {
  if (done.length === 0) return message;
  const range = done.length === 1 ? 'part 1' : `parts 1–${done.length}`;
  return `${message ?? 'failed'}; ${range} of ${total} published (a retry or requeue continues with part ${done.length + 1})`;
}

/** `{ oauthTicket }`: the input of an account connected on the settings page. */
function oauthTicketOf(input: unknown): string | null {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return null;
  const ticket = (input as Record<string, unknown>).oauthTicket;
  if (ticket === undefined) return null;
  if (typeof ticket !== 'string' || Object.keys(input).length !== 1) {
    throw new ConnectorInputError('config.oauthTicket must be the only setting, a string from the settings page');
  }
  return ticket;
}

/**
 * The session to store when it is not the one the worker handed in (a login or refresh happened,
 * or a refused login cleared it): the worker seals it and bumps credentials_version, so the next
 * attempt, in this process or another, starts from it.
 */
export function withSessionUpdate(outcome: DeliveryOutcome, before: BlueskyCredentials, after: StoredSession | null): DeliveryOutcome {
  const same = before.session?.refreshJwt === after?.refreshJwt && before.session?.accessJwt === after?.accessJwt;
  if (same) return outcome;
  const credentials: BlueskyCredentials = { appPassword: before.appPassword, session: after };
  return { ...outcome, credentialsUpdate: { ...credentials } };
}
