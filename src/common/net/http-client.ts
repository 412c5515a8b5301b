import { setMaxListeners } from 'node:events';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { performance } from 'node:perf_hooks';
import { abortCode } from './deadline';
import { blockedAddressError, blockedRange, guardedLookup } from './ssrf-guard';

/**
 * Herald's one outbound HTTP layer: every request Herald sends to a host a workspace chose or a
 * platform runs (webhooks, LinkedIn, Bluesky PDS calls, link-preview pages and images) goes
 * through `send()`, on bare `node:http`/`node:https`. Each request gets, without exception:
 *
 * - the SSRF guard at connect time: host names through `guardedLookup` (DNS rebinding cannot
 *   get past it), IP literals checked here (Node never calls `lookup` for those);
 * - a connect timeout (socket assigned → connected, DNS included) AND a total deadline for the
 *   whole exchange, body included: a server that trickles one byte every few seconds is cut off
 *   at the deadline, not kept alive by every byte as an idle timeout would be;
 * - the caller's AbortSignal (an attempt's deadline, or shutdown): the request ends at
 *   min(total deadline, signal);
 * - a cap on the body bytes read (and on header size: Node's parser refuses more than
 *   MAX_HEADER_BYTES), and optionally an earlier stop chosen by the caller (`stopReading`);
 * - no redirects: a 3xx is an answer like any other.
 *
 * Not axios or fetch: Node's fetch (undici) takes no custom `lookup`, and axios's `timeout` is
 * an idle timeout that a trickling server never triggers. One small function on shared
 * keep-alive agents is also what lets the webhook hot path deliver thousands of requests a
 * second on two cores: steady traffic to a receiver reuses its connections instead of paying a
 * TCP (and TLS) handshake per delivery.
 *
 * Measured against undici (`npm run bench`, section `clients`, 2026-12-02: the webhook's POST,
 * 50 in flight, keep-alive everywhere): this layer 79–84 µs of client CPU per request, a bare
 * `http.request` 78–81, undici's `request()` 64–66 (0.78–0.81×), Node's fetch 406–409 (~5×).
 * Not switched: 15 µs is ~5 % of the worker's CPU per delivery, and undici would have to be
 * taught every rule above (the connect-time lookup, the connect timer apart from the deadline,
 * whether the request may have been sent) as a second, new runtime dependency.
 *
 * Never throws: every failure is a `network_error` result with a code, because a failed attempt
 * is an outcome to record, not an exception.
 */

/** Node's own default, stated here so a `--max-http-header-size` flag cannot raise it for us. */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Idle keep-alive sockets are closed after this long. Node's own http server closes idle
 * connections after 5 s (`server.keepAliveTimeout`), as do many proxies; reusing a socket the
 * server is closing gets an ECONNRESET, so ours let go first. The agent also honours a shorter
 * `Keep-Alive: timeout=n` hint from the server.
 */
const IDLE_SOCKET_TIMEOUT_MS = 4_000;

/**
 * Shared by every request in the process. maxSockets bounds the connections to one host:port
 * (the worker's concurrency is 200 by default, and the per-account in-flight limit is far lower).
 */
const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256, timeout: IDLE_SOCKET_TIMEOUT_MS });
const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256, timeout: IDLE_SOCKET_TIMEOUT_MS });

/** Closes the idle keep-alive sockets (shutdown, tests). Requests in flight are not touched. */
export function closeIdleSockets(): void {
  for (const agent of [httpAgent, httpsAgent]) {
    for (const sockets of Object.values(agent.freeSockets)) {
      for (const socket of sockets ?? []) socket.destroy();
    }
  }
}

export interface OutboundRequest {
  method: string;
  url: string | URL;
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array | null;
}

export interface SendOptions {
  /** From socket assignment (DNS included) to 'connect' / 'secureConnect'. */
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
  /** Overrides the shared keep-alive agent (it must match the URL's protocol); false: no agent. */
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

/** The error code of whatever Node emitted; AggregateError (several addresses tried) included. */
function errorCode(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    const nested = (err as { errors?: unknown }).errors;
    if (Array.isArray(nested)) {
      for (const inner of nested) {
        const innerCode = errorCode(inner);
        if (innerCode !== 'ERR_NETWORK') return innerCode;
      }
    }
  }
  return 'ERR_NETWORK';
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const EMPTY = Buffer.alloc(0);

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
  // Node never calls `lookup` for an IP literal, so the connect-time guard checks literals here.
  if (!opts.allowPrivate && net.isIP(hostname) !== 0) {
    const range = blockedRange(hostname);
    if (range !== null) {
      const err = blockedAddressError(hostname, hostname, range);
      return Promise.resolve(networkError(errorCode(err), err.message, false));
    }
  }
  const signal = opts.signal;
  if (signal?.aborted) return Promise.resolve(networkError(abortCode(signal), 'stopped before sending', false));

  return new Promise<HttpResult>((resolve) => {
    let settled = false;
    let connected = false;
    let connectTimer: NodeJS.Timeout | undefined;
    // eslint-disable-next-line prefer-const -- settle() reads it and may run before it is set (a synchronous throw from request()): a const there would be in its temporal dead zone
    let totalTimer: NodeJS.Timeout | undefined;
    /** Set once the status line and headers arrived: from then on the outcome is a response. */
    let finishResponse: ((cut: string | null) => void) | null = null;

    const settle = (result: HttpResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(totalTimer);
      signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };

    let request: http.ClientRequest | null = null;
    /**
     * Ends the exchange early. With a status already received the server has answered, so that
     * answer stands (its body is just cut short); before that it is a network error.
     */
    const interrupt = (code: string, message: string): void => {
      if (finishResponse !== null) finishResponse(code);
      else settle(networkError(code, message, connected));
      request?.destroy();
    };
    function onAbort(): void {
      const code = abortCode(signal!);
      interrupt(code, code === 'aborted' ? 'stopped by Herald' : 'the attempt reached its deadline');
    }

    const body = req.body ?? null;
    const headers: Record<string, string> = { ...req.headers };
    if (body !== null) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);

    try {
      request = (isHttps ? https : http).request({
        method: req.method,
        protocol: target.protocol,
        hostname,
        port: target.port === '' ? undefined : Number(target.port),
        path: `${target.pathname}${target.search}`,
        headers,
        agent: opts.agent ?? (isHttps ? httpsAgent : httpAgent),
        lookup: opts.allowPrivate ? undefined : guardedLookup(false),
        maxHeaderSize: MAX_HEADER_BYTES,
      });
    } catch (err) {
      // Invalid header names/values and similar are thrown synchronously by Node.
      settle(networkError(errorCode(err), errorMessage(err), false));
      return;
    }
    const outgoing = request;

    totalTimer = setTimeout(() => interrupt('total_timeout', `no complete answer within ${opts.totalTimeoutMs} ms`), opts.totalTimeoutMs);
    if (signal !== undefined) {
      // The worker may share one signal among hundreds of requests in flight. Each listener is
      // removed when its request settles, so many at once is not a leak: switch off Node's
      // MaxListenersExceededWarning for this signal instead of letting it cry wolf.
      setMaxListeners(0, signal);
      signal.addEventListener('abort', onAbort, { once: true });
    }

    outgoing.on('socket', (socket) => {
      if (outgoing.reusedSocket) {
        // A keep-alive socket is already connected: the body goes out at once.
        connected = true;
        return;
      }
      connectTimer = setTimeout(
        () => interrupt('connect_timeout', `no connection within ${opts.connectTimeoutMs} ms`),
        opts.connectTimeoutMs,
      );
      socket.once(isHttps ? 'secureConnect' : 'connect', () => {
        clearTimeout(connectTimer);
        connected = true;
      });
    });

    outgoing.on('error', (err) => {
      if (finishResponse !== null) finishResponse(errorCode(err));
      else settle(networkError(errorCode(err), errorMessage(err), connected));
    });

    outgoing.on('response', (res) => {
      clearTimeout(connectTimer);
      connected = true;
      const keepBytes = Math.min(opts.keepBytes ?? opts.maxBodyBytes, opts.maxBodyBytes);
      const chunks: Buffer[] = [];
      let kept = 0;
      let received = 0;

      finishResponse = (cut: string | null): void => {
        settle({
          kind: 'response',
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: kept === 0 ? EMPTY : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, kept),
          cut,
          latencyMs: elapsed(),
        });
      };
      const stop = (cut: string): void => {
        finishResponse?.(cut);
        res.destroy();
      };

      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        received += chunk.length;
        if (kept < keepBytes) {
          const part = chunk.length <= keepBytes - kept ? chunk : chunk.subarray(0, keepBytes - kept);
          chunks.push(part);
          kept += part.length;
        }
        if (received > opts.maxBodyBytes) stop('limit');
        else if (opts.stopReading !== undefined && opts.stopReading(chunk, { status: res.statusCode ?? 0, headers: res.headers }))
          stop('stopped');
      });
      res.on('end', () => finishResponse?.(null));
      // The connection died mid-body: the status stands, the body is what arrived.
      res.on('error', (err) => finishResponse?.(errorCode(err)));
      res.on('close', () => finishResponse?.(res.complete ? null : 'ECONNRESET'));
    });

    outgoing.end(body ?? undefined);
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
