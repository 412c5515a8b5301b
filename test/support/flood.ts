import * as http from 'node:http';

/**
 * Load from one client address on loopback (127.0.0.0/8 is all loopback on Linux, so
 * 127.0.0.1 and 127.0.0.2 are two clients to Herald's per-address counts): a flood of requests
 * on `concurrency` connections for `durationMs`, or a steady client that sends one request at a
 * time. Every request's status and time are kept. Bounded in time and count, loopback only.
 */

export interface Shot {
  status: number;
  ms: number;
}

export interface FloodRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request from `localAddress`; a status of 0 is a connection that failed. */
export function shoot(baseUrl: string, localAddress: string, req: FloodRequest, agent: http.Agent): Promise<Shot & { body: string }> {
  const url = new URL(req.path, baseUrl);
  const started = performance.now();
  return new Promise((resolve) => {
    const r = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: req.method,
        localAddress,
        agent,
        headers: { ...(req.body !== undefined ? { 'content-length': Buffer.byteLength(req.body) } : {}), ...req.headers },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', () => resolve({ status: 0, ms: performance.now() - started, body: '' }));
      },
    );
    r.on('timeout', () => r.destroy(new Error('timeout')));
    r.on('error', () => resolve({ status: 0, ms: performance.now() - started, body: '' }));
    r.end(req.body);
  });
}

/**
 * `concurrency` loops, each sending `next(i)` back to back from `localAddress` until `durationMs`
 * has passed (and at most `maxRequests` in all). Returns every answer's status and time.
 */
export async function flood(
  baseUrl: string,
  localAddress: string,
  options: { concurrency: number; durationMs: number; maxRequests?: number },
  next: (i: number) => FloodRequest,
): Promise<Shot[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const shots: Shot[] = [];
  const until = performance.now() + options.durationMs;
  const max = options.maxRequests ?? 1_000_000;
  let sent = 0;
  const loop = async (): Promise<void> => {
    while (performance.now() < until && sent < max) {
      const i = sent++;
      const { status, ms } = await shoot(baseUrl, localAddress, next(i), agent);
      shots.push({ status, ms });
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, loop));
  } finally {
    agent.destroy();
  }
  return shots;
}

/** The q-quantile (0..1) of `values`, nearest rank; NaN when there are none. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Counts per status, e.g. { 401: 120, 429: 3400 }. */
export function byStatus(shots: Shot[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of shots) out[s.status] = (out[s.status] ?? 0) + 1;
  return out;
}

/** One line for a log: count, statuses, median, p99 and max. */
export function summary(label: string, shots: Shot[]): string {
  const ms = shots.map((s) => s.ms);
  const f = (v: number) => `${v.toFixed(1)} ms`;
  return `${label}: ${shots.length} requests ${JSON.stringify(byStatus(shots))}, median ${f(quantile(ms, 0.5))}, p99 ${f(quantile(ms, 0.99))}, max ${f(Math.max(...ms))}`;
}

/**
 * A steady client: `next(i)` from `localAddress`, one request at a time on one connection, until
 * `during` settles. Every answer's status and time.
 */
export async function steadyWhile(
  baseUrl: string,
  localAddress: string,
  during: Promise<unknown>,
  next: (i: number) => FloodRequest,
): Promise<Shot[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const shots: Shot[] = [];
  let done = false;
  void during.finally(() => (done = true));
  try {
    for (let i = 0; !done; i++) {
      const { status, ms } = await shoot(baseUrl, localAddress, next(i), agent);
      shots.push({ status, ms });
    }
  } finally {
    agent.destroy();
  }
  return shots;
}

/** A post to one account as the steady client sends it, with `key`. */
export function postRequest(key: string, accountId: string, text: string, extra: Record<string, unknown> = {}): FloodRequest {
  return {
    method: 'POST',
    path: '/v1/posts',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text, targets: [{ accountId }], ...extra }),
  };
}
