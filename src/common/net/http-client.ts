import { setMaxListeners } from 'node:events';
import * as http from 'node:http';
import * as net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { abortCode } from './deadline';
import { closeIdle, dispatcherFor } from './dispatchers';
import { blockedAddressError, blockedRange } from './ssrf-guard';
import { layerErrorCode, toNodeHeaders } from './undici-mapping';

export { MAX_HEADER_BYTES } from './dispatchers';

/**
 * Herald's one outbound HTTP layer: every request Herald sends to a host a workspace chose or a
 * platform runs (webhooks, LinkedIn, Bluesky PDS calls, link-preview pages and images) goes
 * through `send()`, on undici's keep-alive pools (dispatchers.ts). Each request gets, without
 * exception:
 *
 * - the SSRF guard at connect time: host names through `guardedLookup`, which the connector hands
 *   to `net.connect` (DNS rebinding cannot get past it), IP literals checked here (no lookup is
 *   made for those);
 * - a connect timeout (the connector's call → connected, DNS and TLS included) AND a total
 *   deadline for the whole exchange, body included: a server that trickles one byte every few
 *   seconds is cut off at the deadline, not kept alive by every byte as an idle timeout would be;
 * - the caller's AbortSignal (an attempt's deadline, or shutdown): the request ends at
 *   min(total deadline, signal);
 * - a cap on the body bytes read (and on header size: MAX_HEADER_BYTES), and optionally an
 *   earlier stop chosen by the caller (`stopReading`);
 * - whether the request may have been sent (`sent`): true from the moment undici hands it to a
 *   connected socket (`onRequestStart`, called before a byte of it is written), false before;
 * - no redirects: a 3xx is an answer like any other.
 *
 * On undici's dispatcher API rather than its `request()`: the handler sees the request start on a
 * connection (what `sent` needs) and each body chunk as it arrives (the caps and `stopReading`)
 * without a stream in between. Not Node's global fetch: it cannot take a custom `lookup` without
 * a dispatcher of our own anyway, and it cost ~5× the CPU per request (`npm run bench`, section
 * `clients`).
 *
 * On node:http until 2026-12: the same rules on `http.request` with a keep-alive agent. Measured
 * then (section `clients`, 2026-12-02: the webhook's POST, 50 in flight, keep-alive everywhere):
 * that layer 79–84 µs of client CPU per request, undici's `request()` 64–66 (0.78–0.81×).
 *
 * Never throws: every failure is a `network_error` result with a code, because a failed attempt
 * is an outcome to record, not an exception. undici's error codes are mapped to the ones Node
 * gives for the same failure (undici-mapping.ts), and repeated response headers folded as Node
 * folds them, so callers see what they saw on node:http.
 */

/** Closes the idle keep-alive sockets (shutdown, tests). Requests in flight are not touched. */
export function closeIdleSockets(): void {
  closeIdle();
}

export interface OutboundRequest {
  method: string;
  url: string | URL;
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array | null;
}

export interface SendOptions {
  /** From the start of a new connection (DNS included) to connected (TLS included). */
  connectTimeoutMs: number;
  /** The whole exchange: connect, send, status and body. */
  totalTimeoutMs: number;
  /** HERALD_ALLOW_PRIVATE_URLS: skip the connect-time SSRF guard. */
  allowPrivate: boolean;
  /** The most body bytes read; past it the read stops and the answer is marked cut: 'limit'. */
  maxBodyBytes: number;
  /** Of the bytes read, how many are kept in `body` (default: all). */
  keepBytes?: number;
  /**
   * Sees each body chunk as it arrives (with the answer's status and headers); returning true
   * ends the read there (cut: 'stopped'). A link preview stops at the end of the page's <head>,
   * or at once when the answer is not an HTML page.
   */
  stopReading?: (chunk: Buffer, response: { status: number; headers: http.IncomingHttpHeaders }) => boolean;
  /** Ends the request when it fires (an attempt's deadline, shutdown). */
  signal?: AbortSignal;
  /**
   * Connections made by this agent's `createConnection` instead of the shared pool's (it must
   * match the URL's protocol); false: a connection of its own, closed after the answer.
   */
  agent?: http.Agent | false;
}

export interface HttpResponseResult {
  kind: 'response';
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The first `keepBytes` bytes of the body. */
  body: Buffer;
  /**
   * null when the body was read to its end; otherwise why not: 'limit' (maxBodyBytes),
   * 'stopped' (stopReading), or the network code that cut it short (total_timeout,
   * attempt_deadline, aborted, ECONNRESET, ...). The status stands either way: the server answered.
   */
  cut: string | null;
  latencyMs: number;
}

export interface HttpNetworkError {
  kind: 'network_error';
  /**
   * ECONNREFUSED, ECONNRESET, ENOTFOUND, EAI_AGAIN, ETIMEDOUT, EHOSTUNREACH, TLS codes, HPE_*
   * (not HTTP, headers too large), connect_timeout, total_timeout, attempt_deadline, aborted,
   * EBLOCKEDADDRESS, or whatever Node reported.
   */
  code: string;
  /** For logs: it names hosts, never header values or addresses behind a refused name. */
  message: string;
  latencyMs: number;
  /**
   * Whether the request may have reached the server: true once a connection was established
   * (the body is written right after), so a reset or timeout after that is ambiguous.
   */
  sent: boolean;
}

export type HttpResult = HttpResponseResult | HttpNetworkError;

/** `buf` cut to at most `maxBytes` without splitting a UTF-8 sequence, as a string. */
export function utf8Prefix(buf: Buffer, maxBytes: number): string {
  if (buf.length <= maxBytes) return buf.toString('utf8');
  let end = Math.max(0, maxBytes);
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const EMPTY = Buffer.alloc(0);

/** RFC 9110 §5.6.2 token: what Node accepts as a method. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The request's headers for undici, checked as `http.request` checks them (same error codes:
 * ERR_INVALID_HTTP_TOKEN, ERR_INVALID_CHAR, ...), names compared case-insensitively with the
 * last one winning (as `setHeader` does), and the body's content-length last. Throws.
 */
function outgoingHeaders(given: Readonly<Record<string, string>> | undefined, contentLength: string | null): string[] {
  const byName = new Map<string, [string, string]>();
  if (given !== undefined) {
    for (const name of Object.keys(given)) {
      const value = given[name];
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
      byName.set(name.toLowerCase(), [name, value]);
    }
  }
  if (contentLength !== null) byName.set('content-length', ['content-length', contentLength]);
  const flat: string[] = [];
  for (const [name, value] of byName.values()) flat.push(name, value);
  return flat;
}

/** The reason undici's abort gets when the layer ends an exchange (never seen by a caller). */
class Interrupted extends Error {
  constructor(readonly code: string) {
    super(code);
    this.name = 'Interrupted';
  }
}

/** One HTTP exchange under the layer's rules (see the file comment). Never throws. */
export function send(req: OutboundRequest, opts: SendOptions): Promise<HttpResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const networkError = (code: string, message: string, sent: boolean): HttpNetworkError => ({
    kind: 'network_error',
    code,
    message,
    latencyMs: elapsed(),
    sent,
  });

  let target: URL;
  try {
    target = typeof req.url === 'string' ? new URL(req.url) : req.url;
  } catch {
    return Promise.resolve(networkError('ERR_INVALID_URL', 'invalid URL', false));
  }
  const isHttps = target.protocol === 'https:';
  if (!isHttps && target.protocol !== 'http:') {
    return Promise.resolve(networkError('ERR_INVALID_PROTOCOL', `unsupported protocol ${target.protocol}`, false));
  }
  const hostname = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  // No lookup is made for an IP literal, so the connect-time guard checks literals here.
  if (!opts.allowPrivate && net.isIP(hostname) !== 0) {
    const range = blockedRange(hostname);
    if (range !== null) {
      const err = blockedAddressError(hostname, hostname, range);
      return Promise.resolve(networkError(layerErrorCode(err), err.message, false));
    }
  }
  const signal = opts.signal;
  if (signal?.aborted) return Promise.resolve(networkError(abortCode(signal), 'stopped before sending', false));

  const body = req.body ?? null;
  let method: string;
  let headers: string[];
  try {
    if (!TOKEN.test(req.method)) {
      throw Object.assign(new TypeError(`Method must be a valid HTTP token [${JSON.stringify(req.method)}]`), {
        code: 'ERR_INVALID_HTTP_TOKEN',
      });
    }
    method = req.method.toUpperCase();
    headers = outgoingHeaders(
      req.headers,
      body === null ? null : String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength),
    );
  } catch (err) {
    // What http.request would have thrown: invalid header names/values. The message names the
    // header, never its value.
    return Promise.resolve(networkError(layerErrorCode(err), errorMessage(err), false));
  }

  return new Promise<HttpResult>((resolve) => {
    let settled = false;
    /** True once undici handed the request to a connected socket: from then on it may have been sent. */
    let connected = false;
    /** undici's handle on the request once it started (null while it waits for a connection). */
    let controller: Dispatcher.DispatchController | null = null;
    // eslint-disable-next-line prefer-const -- settle() reads it and may run before it is set (a synchronous failure inside dispatch()): a const there would be in its temporal dead zone
    let totalTimer: NodeJS.Timeout | undefined;
    /** Set once the status line and headers arrived: from then on the outcome is a response. */
    let finishResponse: ((cut: string | null) => void) | null = null;
    let release: (() => void) | null = null;

    /**
     * `later`: the answer ended normally, and the caller hears of it only once undici has put the
     * connection back in its pool. undici finishes an answer, calls onResponseEnd, and only a full
     * event-loop turn later (setImmediate, "to make sure that non-spec compliant servers are not
     * closing the connection") says the connection is free. A caller that sends its next request
     * at once (a worker's next delivery to the same receiver) would otherwise find it busy and
     * open a second connection for every request sent that way.
     */
    const settle = (result: HttpResult, later = false): void => {
      if (settled) return;
      settled = true;
      clearTimeout(totalTimer);
      signal?.removeEventListener('abort', onAbort);
      release?.();
      // The microtask runs after undici queued its setImmediate; ours then runs after it.
      if (later) queueMicrotask(() => setImmediate(resolve, result));
      else resolve(result);
    };

    /**
     * Ends the exchange early. With a status already received the server has answered, so that
     * answer stands (its body is just cut short); before that it is a network error. A request
     * still waiting for its connection is refused when it gets one (onRequestStart), before a
     * byte of it is written.
     */
    const interrupt = (code: string, message: string): void => {
      if (finishResponse !== null) finishResponse(code);
      else settle(networkError(code, message, connected));
      controller?.abort(new Interrupted(code));
    };
    function onAbort(): void {
      const code = abortCode(signal!);
      interrupt(code, code === 'aborted' ? 'stopped by Herald' : 'the attempt reached its deadline');
    }

    const keepBytes = Math.min(opts.keepBytes ?? opts.maxBodyBytes, opts.maxBodyBytes);
    // The answer, once its status and headers arrived.
    let status = 0;
    let responseHeaders: http.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let kept = 0;
    let received = 0;

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(request) {
        if (settled) {
          // Ended while it waited for a connection: never written.
          request.abort(new Interrupted('settled'));
          return;
        }
        controller = request;
        connected = true;
      },
      onResponseStart(_controller, statusCode, parsed) {
        // 1xx answers are interim: the final one follows on the same exchange.
        if (statusCode < 200 || settled) return;
        status = statusCode;
        responseHeaders = toNodeHeaders(parsed);
        finishResponse = (cut: string | null): void => {
          settle(
            {
              kind: 'response',
              status,
              headers: responseHeaders,
              body: kept === 0 ? EMPTY : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, kept),
              cut,
              latencyMs: elapsed(),
            },
            cut === null,
          );
        };
      },
      onResponseData(request, chunk) {
        if (settled || finishResponse === null) return;
        received += chunk.length;
        if (kept < keepBytes) {
          const part = chunk.length <= keepBytes - kept ? chunk : chunk.subarray(0, keepBytes - kept);
          chunks.push(part);
          kept += part.length;
        }
        let cut: string | null = null;
        if (received > opts.maxBodyBytes) cut = 'limit';
        else if (opts.stopReading !== undefined && opts.stopReading(chunk, { status, headers: responseHeaders })) cut = 'stopped';
        if (cut !== null) {
          // Stop reading and hang up: the rest of the body is never read.
          finishResponse(cut);
          request.abort(new Interrupted(cut));
        }
      },
      onResponseEnd() {
        finishResponse?.(null);
      },
      onResponseError(_controller, err) {
        // The layer's own stops are settled already; anything else is a failure of the exchange:
        // before the status a network error, after it a body cut short.
        const code = layerErrorCode(err);
        if (finishResponse !== null) finishResponse(code);
        else
          settle(
            networkError(
              code,
              code === 'connect_timeout' ? `no connection within ${opts.connectTimeoutMs} ms` : errorMessage(err),
              connected,
            ),
          );
      },
    };

    totalTimer = setTimeout(() => interrupt('total_timeout', `no complete answer within ${opts.totalTimeoutMs} ms`), opts.totalTimeoutMs);
    if (signal !== undefined) {
      // The worker may share one signal among hundreds of requests in flight. Each listener is
      // removed when its request settles, so many at once is not a leak: switch off Node's
      // MaxListenersExceededWarning for this signal instead of letting it cry wolf.
      setMaxListeners(0, signal);
      signal.addEventListener('abort', onAbort, { once: true });
    }

    try {
      const chosen = dispatcherFor({
        origin: target.origin,
        allowPrivate: opts.allowPrivate,
        connectTimeoutMs: opts.connectTimeoutMs,
        agent: opts.agent,
      });
      release = chosen.release;
      // A request undici refuses (an option or header it rejects) comes back through
      // onResponseError, at once.
      chosen.dispatcher.dispatch({ origin: target.origin, path: `${target.pathname}${target.search}`, method, headers, body }, handler);
    } catch (err) {
      settle(networkError(layerErrorCode(err), errorMessage(err), false));
    }
  });
}

/** Bytes of a webhook answer kept for parsing (a receiver's `{ "url": ... }` answer is tiny). */
export const MAX_PARSE_BYTES = 64 * 1024;
/** Past this many body bytes a webhook answer is cut off: nobody needs more, and reading costs. */
export const MAX_READ_BYTES = 1024 * 1024;

export interface PostJsonOptions {
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  /** How many body bytes the caller shows (stored on the attempt); at least MAX_PARSE_BYTES are kept. */
  excerptBytes: number;
  allowPrivate: boolean;
  signal?: AbortSignal;
  agent?: http.Agent | false;
}

/**
 * One JSON POST (the webhook delivery): reads up to MAX_READ_BYTES of the answer and keeps the
 * first MAX_PARSE_BYTES (or `excerptBytes` if larger). Reading past what is kept lets a
 * medium-sized answer end normally, so its keep-alive connection can be reused.
 */
export function postJson(url: string, body: string, headers: Readonly<Record<string, string>>, opts: PostJsonOptions): Promise<HttpResult> {
  return send(
    { method: 'POST', url, headers, body },
    {
      connectTimeoutMs: opts.connectTimeoutMs,
      totalTimeoutMs: opts.totalTimeoutMs,
      allowPrivate: opts.allowPrivate,
      maxBodyBytes: MAX_READ_BYTES,
      keepBytes: Math.max(opts.excerptBytes, MAX_PARSE_BYTES),
      signal: opts.signal,
      agent: opts.agent,
    },
  );
}
