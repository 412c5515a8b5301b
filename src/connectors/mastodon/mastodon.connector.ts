import { Inject, Injectable } from '@nestjs/common';
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
  VerifyResult,
} from '../connector.interface';
import { networkFailureOf, networkOutcome, poisonOutcome, redactSecrets } from '../outcome-kit';
import { errorMessage, MastodonAccount, parseAccount, parseInstanceLimits, parseJson } from './mastodon-answers';
import { MastodonCalls, StepFailed } from './mastodon-calls';
import { MastodonClient } from './mastodon-client';
import {
  handleOf,
  MastodonConfig,
  MastodonCredentials,
  MastodonLimits,
  parseMastodonInput,
  requireHttps,
  storedConfig,
  storedCredentials,
} from './mastodon-config';
import { mastodonOutcome } from './mastodon-outcome';
import { publishParts } from './mastodon-publish';

/** What the connector reads from HeraldConfig (a plain EnvConfig from loadConfig() also fits). */
export type MastodonConnectorConfig = Pick<HeraldConfig, 'allowPrivateUrls' | 'http'>;

/** An account resolved for calls: where, with which token, as whom. */
interface Session {
  config: MastodonConfig;
  token: string;
  host: string;
}

/**
 * Mastodon, on any instance: `POST /api/v1/statuses` with the job's idempotency key as
 * `Idempotency-Key` (one key per part of a thread), images through `POST /api/v2/media` (polled
 * until processed), a thread as replies (`in_reply_to_id` = the previous part's status), each
 * published part recorded with the outcome so a retry never publishes it again. A retry first
 * looks for the part an earlier attempt may have published (mastodon-publish.ts, mastodon-lookup.ts): the instance
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
    requireHttps(instanceUrl, this.config.allowPrivateUrls);
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
    const calls = this.calls(session.config.instanceUrl, session.token, signal);
    try {
      await publishParts(calls, job, session.config.accountId, parts, done, warnings);
    } catch (err) {
      const failed = err instanceof StepFailed ? err.outcome : this.thrown(err, calls);
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
   * The outcome of something thrown where an outcome was expected: a wait cut by the attempt's
   * signal, or a bug, said plainly and retried. Not rethrown: the parts published so far must be
   * recorded with the outcome.
   */
  private thrown(err: unknown, calls: MastodonCalls): DeliveryOutcome {
    const failure = networkFailureOf(err);
    if (failure) return networkOutcome(failure, calls.context('waiting for the instance', null));
    return {
      ...NO_OUTCOME_DETAILS,
      errorClass: 'transient',
      message: `internal error in the Mastodon connector: ${redactSecrets(err instanceof Error ? err.message : String(err), [calls.token])}`,
    };
  }

  private calls(instanceUrl: string, token: string, signal?: AbortSignal): MastodonCalls {
    return new MastodonCalls(this.client, this.config.http, instanceUrl, token, signal);
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
    const calls = this.calls(instanceUrl, token);
    const host = calls.host;
    const res = await calls.send({ method: 'GET', path: '/api/v1/accounts/verify_credentials' });
    const ctx = calls.context('checking the access token', null);
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
    // No token: the instance's description is public.
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
