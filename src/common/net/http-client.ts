import { setMaxListeners } from 'node:events';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { performance } from 'node:perf_hooks';
import { blockedAddressError, blockedRange, guardedLookup } from './ssrf-guard';

/**
 * One outgoing JSON POST on bare `node:http`/`node:https`, for the delivery hot path.
 *
 * Not axios: the queue must deliver ≥ 5,000 webhooks/s on 2 cores, and every layer between the
 * worker and the socket costs CPU per request (axios adds interceptors, config merging, its own
 * body transforms and redirect machinery we would have to switch off). Here a request is one
 * `http.request` on a shared keep-alive agent, so steady traffic to a receiver reuses its
 * connections instead of paying a TCP (and TLS) handshake per delivery.
 *
 * Never throws: every failure is a `network_error` result with a code, because a failed attempt is
 * an outcome to record, not an exception.
 */

/** Bytes of the body kept for parsing (a receiver's `{ "url": ... }` answer is tiny). */
export const MAX_PARSE_BYTES = 64 * 1024;
/** Past this many body bytes the response is destroyed: nobody needs more, and reading costs. */
export const MAX_READ_BYTES = 1024 * 1024;

/**
 * Idle keep-alive sockets are closed after this long. Node's own http server closes idle
 * connections after 5 s (`server.keepAliveTimeout`), as do many proxies; reusing a socket the
 * server is closing gets an ECONNRESET, so ours let go first. The agent also honours a shorter
 * `Keep-Alive: timeout=n` hint from the server.
 */
const IDLE_SOCKET_TIMEOUT_MS = 4_000;

/**
 * Shared by every delivery in the process. maxSockets bounds the connections to one host:port
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

export interface PostJsonOptions {
  /** From socket creation (DNS included) to 'connect' / 'secureConnect'. */
  connectTimeoutMs: number;
  /** The whole exchange: connect, send, status and body. */
  totalTimeoutMs: number;
  /** How many body bytes go into `excerpt` (stored on the attempt). */
  excerptBytes: number;
  /** HERALD_ALLOW_PRIVATE_URLS: skip the connect-time SSRF guard. */
  allowPrivate: boolean;
  signal?: AbortSignal;
  /** Overrides the shared keep-alive agent (it must match the URL's protocol); false: no agent. */
  agent?: http.Agent | false;
}

export interface HttpResponseResult {
  kind: 'response';
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The first `excerptBytes` of the body as UTF-8, cut on a character boundary. */
  excerpt: string;
  /** The first MAX_PARSE_BYTES of the body as UTF-8, for JSON parsing. */
  bodyText: string;
  /** True when the body was not read to its end (too long, cut off, or out of time). */
  truncated: boolean;
  latencyMs: number;
}

export interface HttpNetworkError {
  kind: 'network_error';
  /**
   * ECONNREFUSED, ECONNRESET, ENOTFOUND, EAI_AGAIN, ETIMEDOUT, EHOSTUNREACH, TLS codes,
   * connect_timeout, total_timeout, aborted, EBLOCKEDADDRESS, or whatever Node reported.
   */
  code: string;
  /** Node's message (for logs); it names hosts and addresses, never header values. */
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
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
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

export function postJson(
  url: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  opts: PostJsonOptions,
): Promise<HttpResult> {
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
    target = new URL(url);
  } catch {
    return Promise.resolve(networkError('ERR_INVALID_URL', 'invalid URL', false));
  }
  const isHttps = target.protocol === 'https:';
  if (!isHttps && target.protocol !== 'http:') {
    return Promise.resolve(networkError('ERR_INVALID_PROTOCOL', `unsupported protocol ${target.protocol}`, false));
  }
  const hostname = target.hostname.replace(/^\[(.*)\]$/, '$1');
  // Node never calls `lookup` for an IP literal, so the connect-time guard checks literals here.
  if (!opts.allowPrivate && net.isIP(hostname) !== 0) {
    const range = blockedRange(hostname);
    if (range !== null) {
      const err = blockedAddressError(hostname, hostname, range);
      return Promise.resolve(networkError(errorCode(err), err.message, false));
    }
  }
  if (opts.signal?.aborted) return Promise.resolve(networkError('aborted', 'aborted before sending', false));

  return new Promise<HttpResult>((resolve) => {
    const signal = opts.signal;
    let settled = false;
    let connected = false;
    let connectTimer: NodeJS.Timeout | undefined;
    let totalTimer: NodeJS.Timeout | undefined;
    /** Set once the status line and headers arrived: from then on the outcome is a response. */
    let finishResponse: ((truncated: boolean) => void) | null = null;

    const settle = (result: HttpResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(totalTimer);
      signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };

    let req: http.ClientRequest | null = null;
    /**
     * Ends the exchange early. With a status already received the receiver has answered, so that
     * answer stands (its body is just cut short); before that it is a network error.
     */
    const interrupt = (code: string, message: string): void => {
      if (finishResponse !== null) finishResponse(true);
      else settle(networkError(code, message, connected));
      req?.destroy();
    };
    function onAbort(): void {
      interrupt('aborted', 'aborted by the caller');
    }

    const requestOptions: http.RequestOptions = {
      method: 'POST',
      protocol: target.protocol,
      hostname,
      port: target.port === '' ? undefined : Number(target.port),
      path: `${target.pathname}${target.search}`,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: opts.agent ?? (isHttps ? httpsAgent : httpAgent),
      lookup: opts.allowPrivate ? undefined : guardedLookup(false),
    };

    try {
      req = (isHttps ? https : http).request(requestOptions);
    } catch (err) {
      // Invalid header names/values and similar are thrown synchronously by Node.
      settle(networkError(errorCode(err), errorMessage(err), false));
      return;
    }
    const request = req;

    totalTimer = setTimeout(
      () => interrupt('total_timeout', `no complete answer within ${opts.totalTimeoutMs} ms`),
      opts.totalTimeoutMs,
    );
    if (signal !== undefined) {
      // The worker may share one shutdown signal among hundreds of attempts in flight. Each
      // listener is removed when its request settles, so many at once is not a leak: switch off
      // Node's MaxListenersExceededWarning for this signal instead of letting it cry wolf.
      setMaxListeners(0, signal);
      signal.addEventListener('abort', onAbort, { once: true });
    }

    request.on('socket', (socket) => {
      if (request.reusedSocket) {
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

    request.on('error', (err) => {
      if (finishResponse !== null) finishResponse(true);
      else settle(networkError(errorCode(err), errorMessage(err), connected));
    });

    request.on('response', (res) => {
      clearTimeout(connectTimer);
      connected = true;
      const keepBytes = Math.max(opts.excerptBytes, MAX_PARSE_BYTES);
      const chunks: Buffer[] = [];
      let kept = 0;
      let received = 0;

      finishResponse = (truncated: boolean): void => {
        const buf = Buffer.concat(chunks, kept);
        settle({
          kind: 'response',
          status: res.statusCode ?? 0,
          headers: res.headers,
          excerpt: utf8Prefix(buf, opts.excerptBytes),
          bodyText: utf8Prefix(buf, MAX_PARSE_BYTES),
          truncated,
          latencyMs: elapsed(),
        });
      };

      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (kept < keepBytes) {
          const part = chunk.length <= keepBytes - kept ? chunk : chunk.subarray(0, keepBytes - kept);
          chunks.push(part);
          kept += part.length;
        }
        if (received > MAX_READ_BYTES) {
          finishResponse?.(true);
          res.destroy();
        }
      });
      res.on('end', () => finishResponse?.(false));
      // The connection died mid-body: the status stands, the body is what arrived.
      res.on('error', () => finishResponse?.(true));
      res.on('close', () => finishResponse?.(!res.complete));
    });

    request.end(body);
  });
}
