import { Inject, Injectable, Optional } from '@nestjs/common';
import type { AppBskyFeedPost } from '@atproto/api';
import { XRPCError } from '@atproto/api';
import { guardedFetch } from '../../common/net/guarded-fetch';
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
import { blueskyErrorOutcome, BlueskyOutcomeContext, blueskyPoison, blueskySuccess, xrpcStatus } from './bluesky-outcome';
import { buildPost, PoisonError, POST_COLLECTION } from './bluesky-post';
import { BlueskySessions } from './bluesky-session';
import { blueskyOAuthErrorOutcome, BlueskyOAuthSession } from './oauth/bluesky-oauth-session';
import { BlueskyOAuth } from './oauth/bluesky-oauth.service';
import { tidForJob } from './tid';

export type BlueskyConnectorConfig = Pick<HeraldConfig, 'allowPrivateUrls' | 'http'>;

/** PDS answers are small JSON; a cap keeps a misbehaving server from filling memory. */
const MAX_PDS_ANSWER_BYTES = 5 * 1024 * 1024;

/** The record at a job's key, if there is one: a retry after a lost response finds it there. */
interface ExistingPost {
  uri: string;
  text: string;
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
    const rkey = tidForJob(job.idempotencyKey, job.payload.scheduledAt);
    let step = 'logging in';
    try {
      return await this.publish(job, session, rkey, signal, (s) => {
        step = s;
      });
    } catch (err) {
      return err instanceof PoisonError ? blueskyPoison(err.message) : failed(err, step);
    }
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
      if (!(err instanceof XRPCError) || !(xrpcStatus(err) === 400 || xrpcStatus(err) >= 500)) throw err;
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
      return { uri: res.data.uri, text: typeof value.text === 'string' ? value.text : '' };
    } catch (err) {
      // 400 RecordNotFound (older PDS versions answer a missing record with 400 InvalidRequest too).
      if (err instanceof XRPCError && [400, 404].includes(xrpcStatus(err))) return null;
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
