import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import * as net from 'node:net';
import { Webhook } from 'standardwebhooks';
import { DEADLINE_MS } from './poll';

/**
 * A real HTTP receiver on loopback for tests: it records every request and answers through a
 * programmable handler. Generic on purpose (webhook connector tests, queue and worker tests, e2e).
 *
 *   const receiver = await startReceiver();
 *   receiver.respondSequence([503, 503, 200]);
 *   ... deliver to receiver.url ...
 *   const [first] = await receiver.waitFor(1);
 *   await receiver.close();
 */

export interface ReceivedRequest {
  method: string;
  /** Path and query string, e.g. `/hook?x=1`. */
  path: string;
  /** Lower-cased names, as Node parses them. */
  headers: http.IncomingHttpHeaders;
  /** The raw body as UTF-8. */
  body: string;
  receivedAt: Date;
  /** The client's port: equal for two requests means one kept-alive connection. */
  remotePort: number;
  /** The client's address (which host sent it, when senders run in network namespaces). */
  remoteAddress: string;
}

export interface Reply {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string | number | string[]>;
  /** A string or Buffer is sent as is; anything else as JSON (with a JSON content-type). */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the connection stays open until the client gives up or close()). */
  hang?: boolean;
  /** Drop the connection without answering (the client sees a reset / socket hang up). */
  destroy?: boolean;
}

/** A status alone means `{ status }` with an empty body. */
export type ReplySpec = Reply | number;

/** `index` is the 0-based number of this request since the receiver started (or reset()). */
export type ReceiverHandler = (request: ReceivedRequest, index: number) => ReplySpec | Promise<ReplySpec>;

export interface Receiver {
  /** `http://127.0.0.1:<port>` (no trailing slash; the `host` it listens on when given). */
  readonly url: string;
  readonly port: number;
  /** Every request so far, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** `url` + path, e.g. urlFor('/hook'). */
  urlFor(path: string): string;
  setHandler(handler: ReceiverHandler): void;
  /** Answer every request the same way. */
  respondWith(reply: ReplySpec): void;
  /** Answer the n-th request with the n-th reply; the last one repeats. */
  respondSequence(replies: ReplySpec[]): void;
  /** Resolves with the requests once at least `n` arrived; rejects after `timeoutMs` (default: poll.ts's DEADLINE_MS). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Forgets the recorded requests (the sequence position restarts too). */
  reset(): void;
  /** Stops listening and drops every open connection, hanging ones included. */
  close(): Promise<void>;
}

function normalise(spec: ReplySpec): Reply {
  return typeof spec === 'number' ? { status: spec } : spec;
}

function send(res: http.ServerResponse, reply: Reply): void {
  if (reply.destroy) {
    res.socket?.destroy();
    return;
  }
  const headers: Record<string, string | number | string[]> = { ...(reply.headers ?? {}) };
  let payload: string | Buffer = '';
  if (typeof reply.body === 'string' || Buffer.isBuffer(reply.body)) {
    payload = reply.body;
  } else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body);
    const hasType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
    if (!hasType) headers['content-type'] = 'application/json';
  }
  res.writeHead(reply.status ?? 200, headers);
  res.end(payload);
}

export interface ReceiverOptions {
  /** The address to listen on; default 127.0.0.1. */
  host?: string;
}

export async function startReceiver(handler?: ReceiverHandler, options: ReceiverOptions = {}): Promise<Receiver> {
  const host = options.host ?? '127.0.0.1';
  const requests: ReceivedRequest[] = [];
  const events = new EventEmitter();
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<net.Socket>();
  let current: ReceiverHandler = handler ?? (() => 200);
  let index = 0;

  const server = http.createServer((req, res) => {
    // A client that hangs up early (a bounded reader, a timeout) makes our writes fail: expected.
    res.on('error', () => undefined);
    req.on('error', () => undefined);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const record: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: new Date(),
        remotePort: req.socket.remotePort ?? 0,
        remoteAddress: req.socket.remoteAddress ?? '',
      };
      const n = index++;
      requests.push(record);
      events.emit('request');
      Promise.resolve()
        .then(() => current(record, n))
        .then(
          (spec) => {
            const reply = normalise(spec);
            if (reply.hang) return;
            if (!reply.delayMs) {
              send(res, reply);
              return;
            }
            const timer = setTimeout(() => {
              timers.delete(timer);
              send(res, reply);
            }, reply.delayMs);
            timers.add(timer);
          },
          (err: unknown) => {
            res.writeHead(500, { 'content-type': 'text/plain' });
            res.end(`receiver handler failed: ${err instanceof Error ? err.message : String(err)}`);
          },
        );
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  const url = `http://${host}:${port}`;

  return {
    url,
    port,
    requests,
    urlFor: (path) => `${url}${path.startsWith('/') ? '' : '/'}${path}`,
    setHandler(next) {
      current = next;
    },
    respondWith(reply) {
      current = () => reply;
    },
    respondSequence(replies) {
      if (replies.length === 0) throw new Error('respondSequence needs at least one reply');
      current = (_req, n) => replies[Math.min(n, replies.length - 1)];
    },
    waitFor(n, timeoutMs = DEADLINE_MS) {
      if (requests.length >= n) return Promise.resolve(requests.slice());
      return new Promise((resolve, reject) => {
        const onRequest = (): void => {
          if (requests.length < n) return;
          clearTimeout(timer);
          events.off('request', onRequest);
          resolve(requests.slice());
        };
        const timer = setTimeout(() => {
          events.off('request', onRequest);
          reject(new Error(`receiver got ${requests.length} request(s), expected ${n} within ${timeoutMs} ms`));
        }, timeoutMs);
        events.on('request', onRequest);
      });
    },
    reset() {
      requests.length = 0;
      index = 0;
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}

/** Verifies a received webhook with the reference `standardwebhooks` library. */
export function verifySignature(secret: string, request: ReceivedRequest): unknown {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers)) if (typeof v === 'string') headers[k] = v;
  return new Webhook(secret).verify(request.body, headers);
}
