import type { XRPCError } from '@atproto/api';
import { classifyHttpStatus } from '../../retry/classify';
import type { ErrorClass } from '../../retry/error-class';
import { HeaderBag, serverRequestedDelayMs } from '../../retry/retry-after';
import type { DeliveryOutcome } from '../connector.interface';
import { NO_OUTCOME_DETAILS } from '../connector.interface';
import { isXrpcError } from './atproto';
import { networkFailureOf, networkOutcome, poisonOutcome, redactSecrets, responseExcerpt } from '../outcome-kit';

/**
 * Maps what a Bluesky call threw onto Herald's outcome classes. Pure: the clock, the
 * service's host and the strings to hide come in through the context.
 *
 * - `429 RateLimitExceeded` → transient, waiting until `RateLimit-Reset` (epoch seconds; PDS 0.4
 *   sends no Retry-After, newer ones do and both are read).
 * - `ExpiredToken` / `InvalidToken` / 401 `AuthenticationRequired` / 403 → auth. The session code
 *   has already refreshed and logged in again by the time one of these reaches here, so the
 *   app password itself is refused (revoked, changed, account taken down).
 * - `AccountTakedown`, `AccountDeactivated` (createSession answers them as 400/401) → auth: a
 *   person has to act, retrying cannot help.
 * - other 4xx (`InvalidRequest`: text too long, bad facet, blob too big...) → permanent.
 * - 5xx, an invalid answer, and every network failure → transient (the job keeps its record
 *   key, so retrying an ambiguous failure cannot duplicate the post), the attempt's deadline
 *   included; a refused (private) address is permanent (outcome-kit.ts).
 */

export interface BlueskyOutcomeContext {
  /** Host of the configured service, for messages. */
  host: string;
  now: Date;
  excerptBytes: number;
  /** Never shown: the app password and session tokens. */
  secrets: readonly string[];
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  /** What a person does about refused credentials (default: re-enter the app password). */
  authRemedy?: string;
}

const AUTH_ERRORS = new Set(['ExpiredToken', 'InvalidToken', 'AuthenticationRequired', 'AccountTakedown', 'AccountDeactivated']);

const EMPTY = NO_OUTCOME_DETAILS;

/**
 * `XRPCError.status` as a plain number: its enum type equals the HTTP status for real answers
 * and is 1 or 2 otherwise; Herald compares it with HTTP status codes, not with enum members.
 */
export function xrpcStatus(err: XRPCError): number {
  return err.status;
}

function httpStatusOf(err: XRPCError): number | null {
  const status = xrpcStatus(err);
  return status >= 100 && status <= 599 ? status : null;
}

function classOf(err: XRPCError, status: number): ErrorClass {
  if (status === 429) return 'transient';
  if (AUTH_ERRORS.has(err.error ?? '')) return 'auth';
  return classifyHttpStatus(status);
}

function messageFor(errorClass: ErrorClass, status: number, err: XRPCError, step: string, host: string, authRemedy: string): string {
  const what = `${err.error ?? 'error'}${err.message && err.message !== err.error ? `: ${err.message}` : ''}`;
  if (status === 429) return `rate limited by ${host} while ${step} (${what})`;
  switch (errorClass) {
    case 'auth':
      return `${host} refused the credentials while ${step} (${what}); ${authRemedy}`;
    case 'permanent':
      return `${host} refused the request while ${step} (HTTP ${status} ${what})`;
    default:
      return `${host} failed while ${step} (HTTP ${status} ${what})`;
  }
}

/**
 * The outcome of a failed step. `step` says what was being done, for the message
 * ("logging in", "uploading image 2", "creating the post").
 */
export function blueskyErrorOutcome(err: unknown, step: string, ctx: BlueskyOutcomeContext): DeliveryOutcome {
  if (isXrpcError(err)) {
    const status = httpStatusOf(err);
    if (status !== null) {
      const errorClass = classOf(err, status);
      const headers: HeaderBag = err.headers ?? {};
      const body = JSON.stringify({ error: err.error, message: err.message });
      return {
        ...EMPTY,
        errorClass,
        httpStatus: status,
        message: redactSecrets(
          messageFor(errorClass, status, err, step, ctx.host, ctx.authRemedy ?? 're-enter the app password'),
          ctx.secrets,
        ),
        responseExcerpt: responseExcerpt(body, ctx.secrets, ctx.excerptBytes),
        serverDelayMs: serverRequestedDelayMs(headers, ctx.now),
      };
    }
  }
  const failure = networkFailureOf(err);
  if (failure !== null) return networkOutcome(failure, ctx, step);
  // An answer the client could not read (XRPCInvalidResponseError) or something unexpected:
  // nothing proves the request wrong, so it is retried within the attempt budget.
  const detail = err instanceof Error ? err.message : String(err);
  return { ...EMPTY, errorClass: 'transient', message: redactSecrets(`unexpected failure while ${step}: ${detail}`, ctx.secrets) };
}

export function blueskyPoison(message: string): DeliveryOutcome {
  return poisonOutcome(message);
}

/** `https://bsky.app/profile/<handle>/post/<rkey>`; the DID stands in for a handle that does not verify. */
export function postUrl(handle: string, did: string, rkey: string): string {
  const who = handle && handle !== 'handle.invalid' ? handle : did;
  return `https://bsky.app/profile/${who}/post/${rkey}`;
}

export function blueskySuccess(uri: string, handle: string, did: string, rkey: string, warnings: string[]): DeliveryOutcome {
  return {
    ...EMPTY,
    errorClass: 'success',
    httpStatus: 200,
    remoteId: uri,
    remoteUrl: postUrl(handle, did, rkey),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}
