import * as http from 'node:http';
import type * as net from 'node:net';
import { bearer, TestApp } from './app';

/**
 * Typed reads of the API and polling helpers for the publish-engine tests
 * (engine-retry, engine-circuit). Shapes follow docs/api.md.
 */

export interface AttemptView {
  number: number;
  startedAt: string;
  finishedAt: string;
  httpStatus: number | null;
  networkError: string | null;
  errorClass: string;
  decision: string;
  retryAt: string | null;
  latencyMs: number;
  responseExcerpt: string | null;
  message: string | null;
  idempotencyKey?: string;
}

export interface JobView {
  id: string;
  postId: string;
  accountId: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  idempotencyKey: string;
  errorClass: string | null;
  lastError: string | null;
  deadReason: string | null;
  remoteId: string | null;
  remoteUrl: string | null;
  finishedAt: string | null;
  attempts: AttemptView[];
}

export interface AccountView {
  id: string;
  status: string;
  statusReason: string | null;
  config: Record<string, unknown>;
  circuit: { state: string; openUntil: string | null; consecutiveFailures: number };
  lastError: string | null;
  lastSuccessAt: string | null;
}

export async function getJob(t: TestApp, key: string, id: string): Promise<JobView> {
  const res = await t.http().get(`/v1/jobs/${id}`).set(bearer(key));
  if (res.status !== 200) throw new Error(`GET /v1/jobs/${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as JobView;
}

export async function getAccount(t: TestApp, key: string, id: string): Promise<AccountView> {
  const res = await t.http().get(`/v1/accounts/${id}`).set(bearer(key));
  if (res.status !== 200) throw new Error(`GET /v1/accounts/${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as AccountView;
}

export async function getPost(t: TestApp, key: string, id: string): Promise<{ id: string; status: string; jobs: JobView[] }> {
  const res = await t.http().get(`/v1/posts/${id}`).set(bearer(key));
  if (res.status !== 200) throw new Error(`GET /v1/posts/${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Polls `read` every `everyMs` until `done(value)`; throws with the last value after `timeoutMs`. */
export async function pollUntil<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (done(last)) return last;
    await sleep(everyMs);
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Every job of `jobIds`, read through the API. */
export function getJobs(t: TestApp, key: string, jobIds: string[]): Promise<JobView[]> {
  return Promise.all(jobIds.map((id) => getJob(t, key, id)));
}

export interface PortServer {
  /** Arrival time of every request. */
  readonly arrivals: Date[];
  close(): Promise<void>;
}

/**
 * A plain HTTP server answering every request with `status` and a JSON body, listening on a
 * given loopback port (startReceiver always picks its own port).
 */
export async function listenOn(port: number, status = 200): Promise<PortServer> {
  const arrivals: Date[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push(new Date());
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
