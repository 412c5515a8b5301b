import type { Agent } from '@atproto/api';
import type { OAuthResponseError, OAuthSession } from '@atproto/oauth-client-node';
import { untilAborted } from '../../../common/net/deadline';
import type { DeliveryOutcome } from '../../connector.interface';
import { NO_OUTCOME_DETAILS } from '../../connector.interface';
import type { BlueskyAuth } from '../bluesky-auth';
import { blueskyErrorOutcome, BlueskyOutcomeContext } from '../bluesky-outcome';
import { atprotoApi, atprotoOAuth } from '../atproto';
import { RefreshLockTimeout } from './bluesky-oauth-stores';

/**
 * An attempt's way to the PDS for an account connected with OAuth: an `@atproto/api` Agent over
 * the library's session, whose fetch handler adds the DPoP-bound access token, refreshes it when
 * it is about to expire (under the cross-process lock) and once more when the PDS answers
 * `invalid_token`. Nothing to store afterwards: the library wrote the new tokens to the session's
 * row itself.
 */
export class BlueskyOAuthSession implements BlueskyAuth {
  private agent: Agent | null = null;

  constructor(
    private readonly restore: () => Promise<OAuthSession>,
    readonly did: string,
    readonly handle: string,
  ) {}

  current(): { did: string; handle: string } {
    return { did: this.did, handle: this.handle };
  }

  async ensure(signal?: AbortSignal): Promise<{ did: string; handle: string }> {
    if (this.agent === null) {
      const session = await untilAborted(this.restore(), signal);
      this.agent = new (atprotoApi().Agent)(session);
    }
    return this.current();
  }

  async call<T>(fn: (agent: Agent) => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.ensure(signal);
    return fn(this.agent!);
  }
}

/** The library's errors for "this session is over": it has already deleted the session. */
function endedSession(err: unknown): Error | null {
  const { TokenInvalidError, TokenRefreshError, TokenRevokedError } = atprotoOAuth();
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof TokenRefreshError || current instanceof TokenRevokedError || current instanceof TokenInvalidError)
      return current;
    current = current.cause;
  }
  return null;
}

function responseError(err: unknown): OAuthResponseError | null {
  const { OAuthResponseError } = atprotoOAuth();
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof OAuthResponseError) return current;
    current = current.cause;
  }
  return null;
}

const RECONNECT = 'reconnect it with Bluesky on the settings page';

/**
 * The outcome of a failed step of an OAuth account's attempt. Pure.
 *
 * - The session ended for good (the refresh token was refused, revoked or expired; the PDS
 *   refused even a fresh token): `auth`, so the account becomes "needs re-authentication" and the
 *   usual alert goes out; its posts wait until a person reconnects.
 * - The authorization server refused the refresh otherwise: 429 and 5xx are `transient` (the
 *   refresh token was not used up); another 4xx (say `invalid_client`: Herald's key is no longer
 *   the one its metadata names) is `auth`.
 * - Another process held the refresh lock too long: `transient`.
 * - Everything else is what the app-password path classifies (XRPC answers, the network).
 */
export function blueskyOAuthErrorOutcome(err: unknown, step: string, ctx: BlueskyOutcomeContext): DeliveryOutcome {
  const ended = endedSession(err);
  if (ended) {
    return {
      ...NO_OUTCOME_DETAILS,
      errorClass: 'auth',
      message: `${ctx.host} ended Herald's OAuth session while ${step} (${ended.message.slice(0, 200)}); ${RECONNECT}`,
    };
  }
  const refused = responseError(err);
  if (refused) {
    const status = refused.status;
    const said = [refused.error, refused.errorDescription].filter((s) => s).join(': ');
    const transient = status === 429 || status >= 500;
    return {
      ...NO_OUTCOME_DETAILS,
      errorClass: transient ? 'transient' : 'auth',
      httpStatus: status,
      message: transient
        ? `${ctx.host}'s authorization server failed while ${step} (HTTP ${status}${said ? ` ${said.slice(0, 200)}` : ''})`
        : `${ctx.host}'s authorization server refused Herald while ${step} (HTTP ${status}${said ? ` ${said.slice(0, 200)}` : ''}); ${RECONNECT}`,
    };
  }
  if (err instanceof RefreshLockTimeout) return { ...NO_OUTCOME_DETAILS, errorClass: 'transient', message: err.message };
  return blueskyErrorOutcome(err, step, { ...ctx, authRemedy: RECONNECT });
}
