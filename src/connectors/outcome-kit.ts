import { utf8Prefix } from '../common/net/http-client';
import { ABORTED, ATTEMPT_DEADLINE } from '../common/net/deadline';
import { BLOCKED_ADDRESS_CODE } from '../common/net/ssrf-guard';
import { classifyNetworkError } from '../retry/classify';
import type { DeliveryOutcome } from './connector.interface';
import { NO_OUTCOME_DETAILS } from './connector.interface';

/**
 * What every connector does the same way when it turns an exchange into an outcome:
 * the response excerpt with secrets redacted, the wording of network failures, the rule that a
 * refused (private) address is permanent, and poison outcomes. One copy, so a platform cannot
 * drift into a weaker redaction or another class for the same failure. Pure.
 */

/** `networkError` of an attempt refused by the SSRF guard. */
export const BLOCKED_ADDRESS_NETWORK_ERROR = 'blocked_address';

const REDACTED = '[redacted]';
/** Shorter values are not hunted for: they would mangle ordinary text and protect nothing. */
const MIN_SECRET_LENGTH = 4;

/** The forms in which a server may echo a value back: as is, and escaped inside a JSON string. */
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
 * The length of the longest suffix of `text` that is a proper prefix of `form` — an excerpt
 * that ends in the middle of a secret. Linear in the secret's length (the KMP failure function
 * over `form` + a separator + the tail of `text`), so a 4 KB token costs microseconds, not the
 * millions of comparisons of trying every prefix length in turn.
 */
export function cutSecretLength(text: string, form: string): number {
  if (form.length < 2) return 0;
  const tail = text.slice(Math.max(0, text.length - (form.length - 1)));
  // Such a suffix starts with the form's first unit: without one in the tail there is none (the
  // common case, e.g. a short JSON answer), and the failure function is not built.
  if (!tail.includes(form[0])) return 0;
  // The sequence form · separator · tail, the separator (-1) equal to no UTF-16 unit.
  const length = form.length + 1 + tail.length;
  const at = (i: number): number => (i < form.length ? form.charCodeAt(i) : i === form.length ? -1 : tail.charCodeAt(i - form.length - 1));
  const fail = new Int32Array(length);
  for (let i = 1; i < length; i++) {
    let k = fail[i - 1];
    while (k > 0 && at(i) !== at(k)) k = fail[k - 1]!;
    if (at(i) === at(k)) k++;
    fail[i] = k;
  }
  return fail[length - 1];
}

/**
 * `text` with every occurrence of a secret replaced, in its plain and its JSON-escaped form, and
 * a tail that is the beginning of a secret (an excerpt cut in the middle of one) replaced too.
 * A server that echoes request headers (httpbin does) must not get a token into the attempt
 * history.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  return redactForms(text, secretForms(secrets));
}

function redactForms(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
  for (const form of forms) {
    const k = cutSecretLength(out, form);
    if (k >= MIN_SECRET_LENGTH) out = out.slice(0, out.length - k) + REDACTED;
  }
  return out;
}

/**
 * The first `excerptBytes` of a body, for the attempt history, with secrets redacted. The whole
 * kept body is redacted before it is cut, so a secret straddling the excerpt's end is caught
 * whole; what is left at the edge is checked again. null for an empty body.
 */
export function responseExcerpt(body: Buffer | string, secrets: readonly string[], excerptBytes: number): string | null {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text === '' || excerptBytes <= 0) return null;
  const forms = secretForms(secrets);
  const redacted = redactForms(text, forms);
  const cut = redactForms(utf8Prefix(Buffer.from(redacted, 'utf8'), excerptBytes), forms);
  return cut.length === 0 ? null : cut;
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

/** What a network failure is described with. */
export interface NetworkFailure {
  code: string;
  /** The layer's message; used only for a refused address (it names the kind of address). */
  message: string;
  /** Whether the request may have reached the server. */
  sent: boolean;
}

export interface NetworkContext {
  /** host[:port] of the server, as configured. */
  host: string;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
}

/** A sentence for a person about a failure that produced no HTTP answer. Never an address or a secret. */
export function describeNetworkError(failure: NetworkFailure, ctx: NetworkContext): string {
  const { host } = ctx;
  const hostname = host.replace(/:\d+$/, '');
  const code = failure.code;
  switch (code) {
    case BLOCKED_ADDRESS_CODE:
      // The guard's message says what kind of address was refused, and how an operator allows it.
      return `refused to connect: ${failure.message}`;
    case 'ECONNREFUSED':
      return `connection refused by ${host}`;
    case 'ECONNRESET':
      return failure.sent ? `connection reset by ${host} before it answered` : `connection reset by ${host}`;
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
      return `no complete answer from ${host} within ${formatSeconds(ctx.totalTimeoutMs)}`;
    case ATTEMPT_DEADLINE:
      return `the attempt reached its deadline before ${host} answered; it is retried like a timeout`;
    case ABORTED:
      return `the attempt was stopped by Herald (shutting down) before ${host} answered`;
    case 'too_large':
      return `${host} answered with more data than Herald reads`;
    case 'HPE_HEADER_OVERFLOW':
      return `${host} answered with headers larger than Herald reads`;
    default:
      if (TLS_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) {
        return `TLS connection to ${host} failed (${code})`;
      }
      if (code.startsWith('HPE_')) return `${host} answered with something that is not valid HTTP (${code})`;
      return `network error talking to ${host} (${code})`;
  }
}

/**
 * The outcome of a failure without an HTTP answer. A refused address is permanent on every
 * platform: the guard's verdict does not change by retrying, only the operator's setting or the
 * URL can. Everything else (timeouts, resets, the attempt's deadline) is transient.
 * `step`, when given, says what was being done ("creating the post").
 */
export function networkOutcome(failure: NetworkFailure, ctx: NetworkContext, step?: string): DeliveryOutcome {
  const blocked = failure.code === BLOCKED_ADDRESS_CODE;
  const described = describeNetworkError(failure, ctx);
  return {
    ...NO_OUTCOME_DETAILS,
    errorClass: blocked ? 'permanent' : classifyNetworkError(failure.code),
    networkError: blocked ? BLOCKED_ADDRESS_NETWORK_ERROR : failure.code,
    message: step === undefined ? described : `${described} (while ${step})`,
  };
}

/**
 * The network failure behind a thrown error: ours (OutboundError), Node's, or one wrapped in
 * `cause` (SDKs wrap what their fetch threw). null when there is none.
 */
export function networkFailureOf(err: unknown): NetworkFailure | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { code, message, sent } = current as { code?: unknown; message?: unknown; sent?: unknown };
    if (typeof code === 'string' && code !== '') {
      return { code, message: typeof message === 'string' ? message : code, sent: sent === true };
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** Nothing was sent: the payload could not be built or signed (poison). */
export function poisonOutcome(message: string): DeliveryOutcome {
  return { ...NO_OUTCOME_DETAILS, errorClass: 'poison', message };
}
