import { setMaxListeners } from 'node:events';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { blockedAddressError, blockedRange, guardedLookup } from './ssrf-guard';

/**
 * A WHATWG-`fetch`-shaped function on `node:http`/`node:https` with the same protections as the
 * webhook client (http-client.ts): the SSRF guard at connect time (literal addresses checked
 * here, names in `guardedLookup`), a connect timeout, a total timeout, and a cap on the bytes
 * read. SDKs that take a `fetch` (`@atproto/api`) get it, and so does Open Graph page fetching.
 *
 * Node's built-in fetch is not used: it cannot take a custom `lookup`, so it would connect to
 * whatever a user-supplied host name resolves to (169.254.169.254 included).
 *
 * Failures reject with an Error whose `code` names them like postJson's network errors:
 * ECONNREFUSED, ECONNRESET, ENOTFOUND, EBLOCKEDADDRESS, connect_timeout, total_timeout,
 * too_large, aborted. Redirects are not followed (a 3xx is returned as is).
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

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 }),
};

export class FetchError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** Whether the request may have reached the server (a connection was established). */
    readonly sent: boolean,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  const nested = (err as { errors?: unknown } | null)?.errors;
  if (Array.isArray(nested) && nested.length > 0) return codeOf(nested[0]);
  return 'ERR_NETWORK';
}

/** Statuses whose answers have no body (new Response() refuses one for them). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

export function guardedFetch(opts: GuardedFetchOptions): FetchLike {
  return async (input, init) => {
    const request = new Request(input, init);
    const target = new URL(request.url);
    const isHttps = target.protocol === 'https:';
    if (!isHttps && target.protocol !== 'http:') {
      throw new FetchError('ERR_INVALID_PROTOCOL', `unsupported protocol ${target.protocol}`, false);
    }
    const hostname = target.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!opts.allowPrivate && net.isIP(hostname) !== 0) {
      const range = blockedRange(hostname);
      if (range !== null) {
        const err = blockedAddressError(hostname, hostname, range);
        throw new FetchError(codeOf(err), err.message, false);
      }
    }
    const body =
      request.method === 'GET' || request.method === 'HEAD' ? null : Buffer.from(await request.arrayBuffer());
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    if (body !== null) headers['content-length'] = String(body.length);
    const signal = init?.signal ?? null;
    if (signal?.aborted) throw new FetchError('aborted', 'aborted before sending', false);

    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      let connected = false;
      let connectTimer: NodeJS.Timeout | undefined;
      const fail = (code: string, message: string): void => {
        if (settled) return;
        settled = true;
        cleanup();
        req.destroy();
        reject(new FetchError(code, message, connected));
      };
      const totalTimer = setTimeout(
        () => fail('total_timeout', `no complete answer within ${opts.totalTimeoutMs} ms`),
        opts.totalTimeoutMs,
      );
      const onAbort = (): void => fail('aborted', 'aborted by the caller');
      const cleanup = (): void => {
        clearTimeout(totalTimer);
        clearTimeout(connectTimer);
        signal?.removeEventListener('abort', onAbort);
      };
      if (signal) {
        setMaxListeners(0, signal);
        signal.addEventListener('abort', onAbort, { once: true });
      }

      const req = (isHttps ? https : http).request({
        method: request.method,
        protocol: target.protocol,
        hostname,
        port: target.port === '' ? undefined : Number(target.port),
        path: `${target.pathname}${target.search}`,
        headers,
        agent: isHttps ? agents.https : agents.http,
        lookup: opts.allowPrivate ? undefined : guardedLookup(false),
      });
      req.on('socket', (socket) => {
        if (req.reusedSocket) {
          connected = true;
          return;
        }
        connectTimer = setTimeout(
          () => fail('connect_timeout', `no connection within ${opts.connectTimeoutMs} ms`),
          opts.connectTimeoutMs,
        );
        socket.once(isHttps ? 'secureConnect' : 'connect', () => {
          clearTimeout(connectTimer);
          connected = true;
        });
      });
      req.on('error', (err) => fail(codeOf(err), err.message));
      req.on('response', (res) => {
        clearTimeout(connectTimer);
        connected = true;
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > opts.maxBodyBytes) {
            fail('too_large', `the answer is larger than ${opts.maxBodyBytes} bytes`);
            res.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (err) => fail(codeOf(err), err.message));
        res.on('end', () => {
          if (settled) return;
          const status = res.statusCode ?? 0;
          // new Response() accepts 200–599 only; 1xx never reach here as final answers.
          if (status < 200 || status > 599) {
            fail('HPE_INVALID_STATUS', `unexpected HTTP status ${status}`);
            return;
          }
          settled = true;
          cleanup();
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
          }
          const bytes = Buffer.concat(chunks);
          resolve(
            new Response(NULL_BODY_STATUSES.has(status) || request.method === 'HEAD' ? null : bytes, {
              status,
              statusText: res.statusMessage ?? '',
              headers: responseHeaders,
            }),
          );
        });
        res.on('close', () => {
          if (!res.complete) fail('ECONNRESET', 'the connection closed before the answer was complete');
        });
      });
      req.end(body ?? undefined);
    });
  };
}
