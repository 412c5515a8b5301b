import { ErrorClass } from './error-class';

/**
 * Maps a final HTTP status onto an outcome class (the table in docs/delivery.md).
 *
 * - 408 Request Timeout, 425 Too Early and 429 Too Many Requests are 4xx codes that say
 *   "not now" rather than "not this": the same request can succeed later, so they are transient
 *   like 5xx.
 * - 401/403 are about the credentials, not the payload: the account needs re-authentication
 *   (connectors refresh tokens once before reporting `auth`).
 * - 3xx is permanent because redirects are deliberately not followed (a redirected webhook could
 *   send signed content somewhere the user never configured); the user has to fix the URL.
 * - 1xx is never a final answer and anything outside 100..599 is not HTTP at all; retrying a
 *   receiver that speaks nonsense would only repeat it, so both are permanent.
 */
export function classifyHttpStatus(status: number): ErrorClass {
  if (!Number.isInteger(status)) return 'permanent';
  if (status >= 200 && status <= 299) return 'success';
  if (status === 408 || status === 425 || status === 429) return 'transient';
  if (status >= 500 && status <= 599) return 'transient';
  if (status === 401 || status === 403) return 'auth';
  return 'permanent';
}

/**
 * Every network-level failure is transient, whatever its code: ECONNREFUSED, ECONNRESET,
 * ENOTFOUND, EAI_AGAIN, ETIMEDOUT, ECONNABORTED, EPIPE, "socket hang up", our own 'timeout',
 * and codes we have never seen. None of them is an answer from the receiver, so none can prove
 * that the request is wrong; a DNS failure or refused connection is exactly the kind of outage
 * backoff exists for. When the failure happened after the request was sent the outcome is
 * ambiguous, which is safe to retry because every attempt carries the same idempotency key (and
 * LinkedIn's duplicate answer is recognised by its connector). An unknown code is treated the
 * same way rather than as permanent: killing a post because a library renamed an error code
 * would be the worse mistake, and maxAttempts still bounds the retries.
 *
 * The parameter is kept so callers pass what they have and so the mapping can grow without
 * changing call sites.
 */
export function classifyNetworkError(code: string | undefined): ErrorClass {
  void code;
  return 'transient';
}

/** Reason phrases for statuses whose generic message would hide what the user should do. */
const SPECIFIC_MESSAGES: Readonly<Record<number, string>> = {
  401: 'the receiver rejected the credentials; reconnect the account',
  403: 'the receiver refused access with these credentials; reconnect the account or check its permissions',
  404: 'the endpoint was not found; check the URL',
  405: 'the endpoint does not accept this method; check the URL',
  408: 'the receiver timed out waiting for the request',
  410: 'the endpoint is gone; update the URL',
  413: 'the payload is too large for the receiver',
  425: 'the receiver asked to retry later (too early)',
  429: 'rate limited by the receiver',
  500: 'server error',
  501: 'the receiver does not implement this request',
  502: 'bad gateway',
  503: 'server unavailable',
  504: 'gateway timeout',
};

/**
 * A short message for a person (the attempt's error message, the failed-posts view, the digest).
 * It never includes response bodies or headers, so no secret echoed by a receiver can leak here.
 */
export function describeHttpOutcome(status: number): string {
  const label = `HTTP ${String(status)}`;
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    return `${label}: not a valid HTTP status`;
  }
  const specific = SPECIFIC_MESSAGES[status];
  if (specific !== undefined) return `${label}: ${specific}`;
  if (status < 200) return `${label}: informational status is not a final answer`;
  if (status < 300) return `${label}: delivered`;
  if (status < 400) return `${label}: the endpoint redirected (redirects are not followed); update the URL`;
  if (status < 500) return `${label}: the receiver rejected the payload`;
  return `${label}: server error`;
}
