import type { IncomingHttpHeaders } from 'node:http';

/**
 * What undici reports, in the shapes the outbound layer has always given its callers (the ones
 * `node:http` gave it): error codes that name the failure the way Node names it, and response
 * headers folded as Node folds repeated ones. Pure functions; the layer (http-client.ts) calls them.
 */

/**
 * Repeated headers whose later copies Node drops (`IncomingMessage`'s rule, from RFC 9110: a
 * second value makes no sense for them). A duplicated `Retry-After` or `Location` must not turn
 * into a list the connectors cannot parse.
 */
const FIRST_VALUE_ONLY: ReadonlySet<string> = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/**
 * undici's parsed headers (lower-case names; a repeated header becomes an array) turned into
 * Node's `IncomingHttpHeaders`: `set-cookie` always an array, the names above keep their first
 * value, `cookie` joined with '; ', any other repeated header joined with ', '. Changes `headers`
 * in place (a repeated header is rare: most answers go through without a write) and returns it.
 */
export function toNodeHeaders(headers: Record<string, string | string[] | undefined>): IncomingHttpHeaders {
  for (const name in headers) {
    const value = headers[name];
    if (typeof value === 'string') {
      if (name === 'set-cookie') headers[name] = [trimEnd(value)];
      else if (endsInSpace(value)) headers[name] = trimEnd(value);
    } else if (Array.isArray(value)) {
      const values = value.map(trimEnd);
      if (name === 'set-cookie') headers[name] = values;
      else headers[name] = FIRST_VALUE_ONLY.has(name) ? values[0] : values.join(name === 'cookie' ? '; ' : ', ');
    }
  }
  return headers;
}

/** Whether a value ends in optional whitespace (SP, HTAB), which Node leaves out of a header value and undici keeps. */
function endsInSpace(value: string): boolean {
  const last = value.charCodeAt(value.length - 1);
  return last === 0x20 || last === 0x09;
}

function trimEnd(value: string): string {
  return endsInSpace(value) ? value.replace(/[ \t]+$/, '') : value;
}

/**
 * undici's own codes for failures Node reports under a system or parser code, mapped to that
 * code so a failure is recorded, classified and worded (outcome-kit.ts) the same whichever client
 * met it:
 * - the other side closed the connection before the answer was complete ('other side closed',
 *   a body shorter than its content-length): Node's ECONNRESET ("socket hang up", "aborted");
 * - response headers over the cap: llhttp's HPE_HEADER_OVERFLOW, as Node's parser says it;
 * - undici's connect timer: the layer's connect_timeout (the layer runs its own; this one only
 *   if it ever fires first).
 * And an answer that is not HTTP: undici 8.14 raises its HTTPParserError without llhttp's error
 * name (it looks the name up by number in a table keyed by name), where Node says
 * HPE_INVALID_CONSTANT or the like. Such an error is HPE_INVALID_RESPONSE: still an HPE_ code
 * (classified and worded as "not valid HTTP"), its message still llhttp's reason.
 */
const UNDICI_CODES: Readonly<Record<string, string>> = {
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'ECONNRESET',
  UND_ERR_HEADERS_OVERFLOW: 'HPE_HEADER_OVERFLOW',
  UND_ERR_CONNECT_TIMEOUT: 'connect_timeout',
};

/**
 * The layer's code for an error: undici's codes mapped as above, system and parser codes as they
 * are (ECONNREFUSED, EPIPE, HPE_INVALID_CONSTANT, TLS codes, EBLOCKEDADDRESS from the guard), the
 * first meaningful code inside an AggregateError (several addresses tried), ERR_NETWORK when
 * there is none.
 */
export function layerErrorCode(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return UNDICI_CODES[code] ?? code;
    if ((err as { name?: unknown }).name === 'HTTPParserError') return 'HPE_INVALID_RESPONSE';
    const nested = (err as { errors?: unknown }).errors;
    if (Array.isArray(nested)) {
      for (const inner of nested) {
        const innerCode = layerErrorCode(inner);
        if (innerCode !== 'ERR_NETWORK') return innerCode;
      }
    }
  }
  return 'ERR_NETWORK';
}
