import type { HttpResponseResult, HttpResult } from '../../common/net/http-client';
import { MAX_PARSE_BYTES, utf8Prefix } from '../../common/net/http-client';
import { classifyHttpStatus, describeHttpOutcome } from '../../retry/classify';
import { serverRequestedDelayMs } from '../../retry/retry-after';
import type { DeliveryOutcome } from '../connector.interface';
import { NO_OUTCOME_DETAILS } from '../connector.interface';
import { networkOutcome, poisonOutcome, responseExcerpt } from '../outcome-kit';

/**
 * Maps one webhook HTTP exchange onto Herald's outcome classes. Pure: the clock, the
 * timeouts and the strings to hide come in through the context.
 */

export interface OutcomeContext {
  url: URL;
  now: Date;
  /** Never shown in an excerpt: the signing secret and the custom header values. */
  secrets: readonly string[];
  excerptBytes: number;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
}

const MAX_REMOTE_URL_LENGTH = 2048;
const MAX_REMOTE_ID_LENGTH = 512;
const MAX_LOCATION_SHOWN = 300;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * A receiver's `{ "url": "https://blog.example/p/1", "id": "…" }` answer. Anything else
 * (not JSON, no url, a non-http url) records nothing: the post was still delivered.
 */
export function readRemoteRef(bodyText: string): { remoteId: string | null; remoteUrl: string | null } {
  const none = { remoteId: null, remoteUrl: null };
  if (!bodyText.trimStart().startsWith('{')) return none;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return none;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return none;
  const { url, id } = parsed as { url?: unknown; id?: unknown };
  const remoteUrl = typeof url === 'string' && url.length <= MAX_REMOTE_URL_LENGTH && isHttpUrl(url) ? url : null;
  let remoteId: string | null = null;
  if (typeof id === 'string' && id.length > 0 && id.length <= MAX_REMOTE_ID_LENGTH) remoteId = id;
  // WordPress and many CMSs answer numeric ids.
  else if (typeof id === 'number' && Number.isSafeInteger(id)) remoteId = String(id);
  return { remoteId, remoteUrl };
}

/**
 * The Location of a redirect, for the message: resolved against the request URL, without query
 * string, fragment or credentials (they may carry tokens). null when absent or not http(s).
 */
export function shownLocation(location: string | undefined, base: URL): string | null {
  if (location === undefined || location.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(location.trim(), base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  return shown.length > MAX_LOCATION_SHOWN ? `${shown.slice(0, MAX_LOCATION_SHOWN)}…` : shown;
}

function responseMessage(result: HttpResponseResult, url: URL): string {
  // For 3xx: "HTTP 302: the endpoint redirected (redirects are not followed); update the URL".
  const base = describeHttpOutcome(result.status);
  if (result.status < 300 || result.status > 399) return base;
  const location = shownLocation(result.headers.location, url);
  return location === null ? base : `${base} (Location: ${location})`;
}

const EMPTY = NO_OUTCOME_DETAILS;

export function webhookOutcome(result: HttpResult, ctx: OutcomeContext): DeliveryOutcome {
  if (result.kind === 'network_error') return networkOutcome(result, { ...ctx, host: ctx.url.host });
  const errorClass = classifyHttpStatus(result.status);
  const outcome: DeliveryOutcome = {
    ...EMPTY,
    errorClass,
    httpStatus: result.status,
    responseExcerpt: responseExcerpt(result.body, ctx.secrets, ctx.excerptBytes),
    // A server's wait is honoured on any response, a 2xx included (a 202 may ask for pacing).
    serverDelayMs: serverRequestedDelayMs(result.headers, ctx.now),
  };
  if (errorClass === 'success') return { ...outcome, ...readRemoteRef(utf8Prefix(result.body, MAX_PARSE_BYTES)) };
  return { ...outcome, message: responseMessage(result, ctx.url) };
}

export { poisonOutcome };
