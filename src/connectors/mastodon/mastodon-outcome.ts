import type { HttpResult } from '../../common/net/http-client';
import { utf8Prefix } from '../../common/net/http-client';
import { classifyHttpStatus, describeHttpOutcome } from '../../retry/classify';
import { serverRequestedDelayMs } from '../../retry/retry-after';
import type { DeliveryOutcome } from '../connector.interface';
import { NO_OUTCOME_DETAILS } from '../connector.interface';
import { networkOutcome, redactSecrets, responseExcerpt } from '../outcome-kit';
import { errorMessage, parseJson } from './mastodon-answers';

export interface MastodonOutcomeContext {
  /** What the call was for, in the message: "creating part 2 of 3", "uploading image 1". */
  step: string;
  now: Date;
  /** The access token: never in an excerpt or a message. */
  secrets: readonly string[];
  excerptBytes: number;
  /** host[:port] of the instance, for messages. */
  host: string;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  /**
   * The status this call replies to (`in_reply_to_id`), when it creates a thread's later part: a
   * 404 then means that status is gone.
   */
  replyTo?: { id: string; label: string } | null;
}

/**
 * Maps one answer of a Mastodon instance (or a failure without one) onto Herald's classes. Pure.
 * Mastodon's error answers are `{ "error": "…" }` (its API documentation, "Errors"):
 * - 2xx → success;
 * - 401 ("The access token is invalid": revoked) and 403 (the token lacks a scope, or the account
 *   may not post) → auth: the account needs a person;
 * - 404 on a reply → permanent: the status the part replies to was deleted, so the thread cannot
 *   go on under it; another 404 → permanent too (nothing there to retry);
 * - 422 → permanent, with the instance's own message (`Validation failed: Text character limit
 *   of 500 exceeded`): the same status would be refused again;
 * - 429 → transient, waiting until `X-RateLimit-Reset` (an ISO 8601 time), through the retry
 *   policy's server-wait machinery (retry/retry-after.ts);
 * - 408, 425, 5xx and every failure without an answer → transient (a refused private address is
 *   permanent: outcome-kit.ts); other 4xx and 3xx → permanent.
 */
export function mastodonOutcome(result: HttpResult, ctx: MastodonOutcomeContext): DeliveryOutcome {
  if (result.kind === 'network_error') return networkOutcome(result, ctx, ctx.step);
  const { status, headers } = result;
  const text = utf8Prefix(result.body, result.body.length);
  const said = errorMessage(parseJson(text));
  const instanceSaid = said === null ? '' : `: ${redactSecrets(said.slice(0, 300), ctx.secrets)}`;
  const common = { ...NO_OUTCOME_DETAILS, httpStatus: status, responseExcerpt: responseExcerpt(text, ctx.secrets, ctx.excerptBytes) };
  const from = `${ctx.host} (Mastodon)`;
  if (status >= 200 && status <= 299) return { ...common, errorClass: 'success' };
  switch (status) {
    case 401:
      return {
        ...common,
        errorClass: 'auth',
        message: `${from} refused the access token while ${ctx.step}${instanceSaid} (revoked, or the app was removed); reconnect the account`,
      };
    case 403:
      return {
        ...common,
        errorClass: 'auth',
        message: `${from} did not allow ${ctx.step}${instanceSaid}: the token needs the write:statuses and write:media scopes, and the account must be allowed to post; reconnect it`,
      };
    case 404:
      if (ctx.replyTo) {
        return {
          ...common,
          errorClass: 'permanent',
          message: `${ctx.replyTo.label} (status ${ctx.replyTo.id}) is no longer on ${ctx.host}: it was deleted, so ${ctx.step.replace(/^creating /, '')} cannot reply to it. Post the rest as a new thread`,
        };
      }
      return {
        ...common,
        errorClass: 'permanent',
        message: `${describeHttpOutcome(status)} from ${from} while ${ctx.step}${instanceSaid}`,
      };
    case 422:
      return {
        ...common,
        errorClass: 'permanent',
        message: `${from} refused ${ctx.step.replace(/^creating /, '')}${instanceSaid || ' (422, without a reason)'}`,
      };
    case 429:
      return {
        ...common,
        errorClass: 'transient',
        serverDelayMs: serverRequestedDelayMs(headers, ctx.now),
        message: `rate limited by ${from} while ${ctx.step}; waiting until its limit resets`,
      };
    default:
      return {
        ...common,
        errorClass: classifyHttpStatus(status),
        message: `${describeHttpOutcome(status)} from ${from} while ${ctx.step}${instanceSaid}`,
      };
  }
}
