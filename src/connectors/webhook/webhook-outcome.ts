import type { HttpNetworkError, HttpResponseResult, HttpResult } from '../../common/net/http-client';
import { utf8Prefix } from '../../common/net/http-client';
import { BLOCKED_ADDRESS_CODE } from '../../common/net/ssrf-guard';
import { classifyHttpStatus, classifyNetworkError, describeHttpOutcome } from '../../retry/classify';
import { serverRequestedDelayMs } from '../../retry/retry-after';
import type { DeliveryOutcome } from '../connector.interface';
import { NO_OUTCOME_DETAILS } from '../connector.interface';

/**
 * Maps one webhook HTTP exchange onto Herald's outcome classes (SPEC §4). Pure: the clock, the
 * timeouts and the strings to hide come in through the context.
 */

/** `networkError` of an attempt refused by the SSRF guard (the interface's documented name). */
export const BLOCKED_ADDRESS_NETWORK_ERROR = 'blocked_address';

export interface OutcomeContext {
  url: URL;
  now: Date;
  /** Never shown in an excerpt: the signing secret and the custom header values. */
  secrets: readonly string[];
  excerptBytes: number;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
}

const REDACTED = '[redacted]';
/** Shorter values are not hunted for: they would mangle ordinary text and protect nothing. */
const MIN_SECRET_LENGTH = 4;
const MAX_REMOTE_URL_LENGTH = 2048;
const MAX_REMOTE_ID_LENGTH = 512;
const MAX_LOCATION_SHOWN = 300;

/** The forms in which a receiver may echo a value back: as is, and escaped inside a JSON string. */
function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    forms.add(secret);
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  // Longest first, so a secret that contains another is replaced whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * `text` with every occurrence of a secret replaced, and a tail that is the beginning of a secret
 * (an excerpt cut in the middle of one) replaced too. A receiver that echoes request headers
 * (httpbin does) must not get a blog's Authorization value into the attempt history.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  const forms = secretForms(secrets);
  let out = text;
  for (const form of forms) out = out.split(form).join(REDACTED);
  for (const form of forms) {
    for (let k = Math.min(form.length - 1, out.length); k >= MIN_SECRET_LENGTH; k--) {
      if (out.endsWith(form.slice(0, k))) {
        out = out.slice(0, out.length - k) + REDACTED;
        break;
      }
    }
  }
  return out;
}

function excerptOf(result: HttpResponseResult, ctx: OutcomeContext): string | null {
  // Redact the longer parse buffer first, then cut: a secret straddling the excerpt's end is caught whole.
  const redacted = redactSecrets(result.bodyText, ctx.secrets);
  const cut = redactSecrets(utf8Prefix(Buffer.from(redacted, 'utf8'), ctx.excerptBytes), ctx.secrets);
  return cut.length === 0 ? null : cut;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * A receiver's `{ "url": "https://blog.example/p/1", "id": "…" }` answer (SPEC §5). Anything else
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
  const remoteUrl =
    typeof url === 'string' && url.length <= MAX_REMOTE_URL_LENGTH && isHttpUrl(url) ? url : null;
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

/** "20 s", "0.3 s", "1.5 s". */
export function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(1))} s`;
}

const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_REVOKED',
  'EPROTO',
]);

/** A sentence for a person about a failure that produced no HTTP answer. */
export function describeNetworkError(result: HttpNetworkError, ctx: OutcomeContext): string {
  const host = ctx.url.host;
  const hostname = ctx.url.hostname;
  const code = result.code;
  switch (code) {
    case BLOCKED_ADDRESS_CODE:
      // The guard's message names the host, the address and its range, and HERALD_ALLOW_PRIVATE_URLS.
      return `refused to connect: ${result.message}`;
    case 'ECONNREFUSED':
      return `connection refused by ${host}`;
    case 'ECONNRESET':
      return result.sent ? `connection reset by ${host} before it answered` : `connection reset by ${host}`;
    case 'EPIPE':
      return `connection closed by ${host} while the request was being sent`;
    case 'ENOTFOUND':
      return `host ${hostname} not found (DNS)`;
    case 'EAI_AGAIN':
      return `DNS lookup of ${hostname} failed temporarily`;
    case 'ETIMEDOUT':
      return `connection to ${host} timed out`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${host} is unreachable (${code})`;
    case 'connect_timeout':
      return `could not connect to ${host} within ${formatSeconds(ctx.connectTimeoutMs)}`;
    case 'total_timeout':
      return `no answer within ${formatSeconds(ctx.totalTimeoutMs)} (${host})`;
    case 'aborted':
      return `the attempt was stopped by Herald before ${host} answered`;
    default:
      if (TLS_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) {
        return `TLS connection to ${host} failed (${code})`;
      }
      if (code.startsWith('HPE_')) return `${host} answered with something that is not valid HTTP (${code})`;
      return `network error talking to ${host} (${code})`;
  }
}

const EMPTY = NO_OUTCOME_DETAILS;

export function webhookOutcome(result: HttpResult, ctx: OutcomeContext): DeliveryOutcome {
  if (result.kind === 'network_error') {
    const blocked = result.code === BLOCKED_ADDRESS_CODE;
    return {
      ...EMPTY,
      // The guard's verdict does not change by retrying: only the operator's setting or the URL can.
      errorClass: blocked ? 'permanent' : classifyNetworkError(result.code),
      networkError: blocked ? BLOCKED_ADDRESS_NETWORK_ERROR : result.code,
      message: describeNetworkError(result, ctx),
    };
  }
  const errorClass = classifyHttpStatus(result.status);
  const outcome: DeliveryOutcome = {
    ...EMPTY,
    errorClass,
    httpStatus: result.status,
    responseExcerpt: excerptOf(result, ctx),
    // SPEC §4: a server's wait is honoured on any response, a 2xx included (a 202 may ask for pacing).
    serverDelayMs: serverRequestedDelayMs(result.headers, ctx.now),
  };
  if (errorClass === 'success') return { ...outcome, ...readRemoteRef(result.bodyText) };
  return { ...outcome, message: responseMessage(result, ctx.url) };
}

/** Nothing was sent: the payload could not be built or signed (SPEC §4 "poison"). */
export function poisonOutcome(message: string): DeliveryOutcome {
  return { ...EMPTY, errorClass: 'poison', message };
}
