import { OutboundError } from './deadline';
import { send } from './http-client';

/** The error the adapter rejects with (an OutboundError; the older name kept for callers). */
export { OutboundError as FetchError } from './deadline';

/**
 * A WHATWG-`fetch`-shaped function over the outbound layer (`send` in http-client.ts), for SDKs
 * that take a `fetch` (`@atproto/api`). Same guard, timeouts, deadline and byte cap as every
 * other request; `init.signal` (the attempt's signal, passed by the SDK from the call's options)
 * ends the request too.
 *
 * Node's built-in fetch is not used: it cannot take a custom `lookup`, so it would connect to
 * whatever a user-supplied host name resolves to (169.254.169.254 included).
 *
 * Failures reject with an OutboundError whose `code` names them like the layer's network errors:
 * ECONNREFUSED, ECONNRESET, ENOTFOUND, EBLOCKEDADDRESS, connect_timeout, total_timeout,
 * attempt_deadline, aborted, too_large. An answer whose body did not arrive whole rejects too
 * (an SDK cannot use half a JSON document). Redirects are not followed (a 3xx is returned as is).
 */

export interface GuardedFetchOptions {
  connectTimeoutMs: number;
  /** The whole exchange, body included. */
  totalTimeoutMs: number;
  /** Past this many body bytes the request fails with `too_large`. */
  maxBodyBytes: number;
  /** HERALD_ALLOW_PRIVATE_URLS: skip the SSRF guard. */
  allowPrivate: boolean;
}

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses whose answers have no body (new Response() refuses one for them). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

export function guardedFetch(opts: GuardedFetchOptions): FetchLike {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.method === 'GET' || request.method === 'HEAD' ? null : Buffer.from(await request.arrayBuffer());
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    // A Request carries its own signal (the OAuth client's DPoP wrapper passes Requests): it ends the request too.
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const result = await send({ method: request.method, url: request.url, headers, body }, { ...opts, signal });
    if (result.kind === 'network_error') throw new OutboundError(result.code, result.message, result.sent);
    if (result.cut !== null) {
      const code = result.cut === 'limit' ? 'too_large' : result.cut;
      const message = code === 'too_large' ? `the answer is larger than ${opts.maxBodyBytes} bytes` : `the answer was cut short (${code})`;
      throw new OutboundError(code, message, true);
    }
    const status = result.status;
    // new Response() accepts 200–599 only; 1xx never reach here as final answers.
    if (status < 200 || status > 599) throw new OutboundError('HPE_INVALID_STATUS', `unexpected HTTP status ${status}`, true);
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(result.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
    }
    return new Response(NULL_BODY_STATUSES.has(status) || request.method === 'HEAD' ? null : result.body, {
      status,
      headers: responseHeaders,
    });
  };
}
