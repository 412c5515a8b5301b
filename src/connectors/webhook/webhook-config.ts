import { ConnectorInputError } from '../connector.interface';

/**
 * The shapes a webhook account is stored in, and the validation of the API's `config` input.
 * Header VALUES are secrets (a blog's `Authorization: Bearer …`), so only their names are in the
 * public config; the values live with the signing secret in the encrypted credentials.
 */

/** Public config, shown by the API and the page. */
export interface WebhookConfig {
  url: string;
  headerNames: string[];
}

/** Encrypted credentials. */
export interface WebhookCredentials {
  secret: string;
  headers: Record<string, string>;
}

/** What the API accepts as `config` for a webhook account. */
export interface WebhookInput {
  url: string;
  /** undefined: not given (a PATCH keeps the stored headers). */
  headers: Record<string, string> | undefined;
}

export const MAX_URL_LENGTH = 2048;
export const MAX_HEADERS = 20;
export const MAX_HEADER_NAME_LENGTH = 256;
export const MAX_HEADER_VALUE_LENGTH = 8192;

/**
 * Headers a user may not set. The first group is Herald's own (the signature, the idempotency key,
 * the JSON body's type): letting an account override them would break the contract receivers
 * verify. The second is transport framing that Node computes, where a user value would corrupt
 * the request (a wrong content-length, chunked encoding, a connection upgrade).
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'idempotency-key',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'user-agent',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
]);

/** RFC 9110 §5.6.2 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What Node accepts in a header value (field-vchar, SP, HTAB; no CR/LF, no characters > 0xFF). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const ALLOWED_KEYS = ['url', 'headers'];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks the syntax of `config.url` (the SSRF check is separate: it needs DNS). */
export function parseWebhookUrl(value: unknown): URL {
  const problem = 'config.url must be an absolute http(s) URL';
  if (typeof value !== 'string' || value.length === 0) throw new ConnectorInputError(`${problem} (it is required)`);
  if (value.length > MAX_URL_LENGTH) {
    throw new ConnectorInputError(`config.url must be at most ${MAX_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConnectorInputError(problem);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new ConnectorInputError(problem);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConnectorInputError('config.url must not contain a user name or password; send credentials in config.headers instead');
  }
  return url;
}

/**
 * Validates `config.headers`: at most 20 string→string entries with token names, none of them
 * reserved, no name twice (names are case-insensitive). Messages name the header, never its value.
 * `null` clears the custom headers.
 */
export function parseCustomHeaders(value: unknown): Record<string, string> {
  if (value === null) return {};
  if (!isPlainObject(value)) {
    throw new ConnectorInputError('config.headers must be an object of header names to string values');
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS) {
    throw new ConnectorInputError(`config.headers may hold at most ${MAX_HEADERS} headers, got ${entries.length}`);
  }
  const seen = new Set<string>();
  // Pairs then Object.fromEntries: a header literally named "__proto__" stays an own property.
  const headers: Array<[string, string]> = [];
  for (const [name, raw] of entries) {
    const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
    if (name.length > MAX_HEADER_NAME_LENGTH || !TOKEN.test(name)) {
      throw new ConnectorInputError(`config.headers: ${shown} is not a valid header name`);
    }
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower)) {
      throw new ConnectorInputError(`config.headers: ${shown} is set by Herald and cannot be overridden`);
    }
    if (seen.has(lower)) {
      throw new ConnectorInputError(`config.headers: ${shown} is given twice (header names are case-insensitive)`);
    }
    seen.add(lower);
    if (typeof raw !== 'string') {
      throw new ConnectorInputError(`config.headers[${shown}] must be a string`);
    }
    if (raw.length > MAX_HEADER_VALUE_LENGTH) {
      throw new ConnectorInputError(`config.headers[${shown}] must be at most ${MAX_HEADER_VALUE_LENGTH} characters`);
    }
    if (!HEADER_VALUE.test(raw)) {
      throw new ConnectorInputError(
        `config.headers[${shown}] contains characters not allowed in a header value (line breaks or control characters)`,
      );
    }
    headers.push([name, raw]);
  }
  return Object.fromEntries(headers);
}

/** Validates the API's `config` object for a webhook account. */
export function parseWebhookInput(input: unknown): WebhookInput {
  if (!isPlainObject(input)) {
    throw new ConnectorInputError('config must be an object with url and optional headers');
  }
  const unknown = Object.keys(input).filter((key) => !ALLOWED_KEYS.includes(key));
  if (unknown.length > 0) {
    const names = unknown.map((key) => JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key)).join(', ');
    throw new ConnectorInputError(`config has unknown field(s) ${names}; a webhook accepts url and headers`);
  }
  const url = parseWebhookUrl(input.url);
  const headers = input.headers === undefined ? undefined : parseCustomHeaders(input.headers);
  return { url: url.href, headers };
}

/** Stored headers read back leniently: anything that is not a string pair is dropped. */
export function storedHeaders(value: unknown): Record<string, string> {
  if (!isPlainObject(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** The stored URL, or null when the account has none usable. */
export function storedUrl(config: Record<string, unknown>): URL | null {
  const value = config.url;
  if (typeof value !== 'string') return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

/**
 * Do two webhook URLs share an origin (scheme, host and port)? Pure. Anything that is not a URL
 * (a stored config without one) shares nothing: the stored secrets are not carried over.
 */
export function sameOrigin(previousUrl: unknown, nextUrl: string): boolean {
  if (typeof previousUrl !== 'string') return false;
  try {
    return new URL(previousUrl).origin === new URL(nextUrl).origin;
  } catch {
    return false;
  }
}
