import * as http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { closeIdleSockets, postJson } from '../src/common/net/http-client';

/**
 * Outbound HTTP clients compared on the webhook's hot path (issue 21: "a keep-alive pool for
 * webhook receivers, undici, if it measures better than node:http"): the same JSON POST, with a
 * webhook's headers, to the benchmark receiver (its own process), CONCURRENCY requests in flight,
 * in this process and nothing else running in it, so its CPU time (process.cpuUsage, user +
 * system) is the client's. Each client keeps its connections alive.
 *
 * - herald: Herald's own layer (`postJson`, src/common/net/http-client.ts: undici's dispatcher on
 *   a shared keep-alive Agent, with the guard's connector, its connect timer, total deadline, body
 *   caps and result object; on node:http until 2026-12);
 * - node:http: a bare `http.request` on a keep-alive agent (the floor for node:http, the layer's
 *   client before 2026-12);
 * - undici: `request()` on an undici `Agent` (the npm package, the client Node's fetch is built on);
 * - fetch: Node's global fetch (its bundled undici), body read to the end.
 */

const CONCURRENCY = 50;

export interface ClientRun {
  client: string;
  perSecond: number;
  cpuUsPerRequest: number;
}

type Post = (url: string, body: string, headers: Record<string, string>) => Promise<number>;

function headersFor(body: string): Record<string, string> {
  const id = randomUUID();
  return {
    'content-type': 'application/json',
    'user-agent': 'Herald/1.0',
    'idempotency-key': id,
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': 'v1,sYvtC7FT66jrcQJtS8S94vTKlDufw9zbkkLYN0u6tl4=',
    'content-length': String(Buffer.byteLength(body)),
  };
}

function clients(): { name: string; post: Post; close: () => Promise<void> }[] {
  const nodeAgent = new http.Agent({ keepAlive: true, maxSockets: 256, timeout: 4_000 });
  const undiciAgent = new Agent({ keepAliveTimeout: 4_000, connections: 256 });
  return [
    {
      name: 'herald (its layer, on undici)',
      post: async (url, body, headers) => {
        const r = await postJson(url, body, headers, {
          connectTimeoutMs: 5_000,
          totalTimeoutMs: 20_000,
          excerptBytes: 2_048,
          allowPrivate: true,
        });
        if (r.kind !== 'response') throw new Error(`herald client: ${r.code}`);
        return r.status;
      },
      close: () => {
        closeIdleSockets();
        return Promise.resolve();
      },
    },
    {
      name: 'node:http (bare)',
      post: (url, body, headers) =>
        new Promise<number>((resolve, reject) => {
          const req = http.request(url, { method: 'POST', agent: nodeAgent, headers }, (res) => {
            res.on('data', () => undefined);
            res.on('end', () => resolve(res.statusCode ?? 0));
            res.on('error', reject);
          });
          req.on('error', reject);
          req.end(body);
        }),
      close: () => {
        nodeAgent.destroy();
        return Promise.resolve();
      },
    },
    {
      name: 'undici request()',
      post: async (url, body, headers) => {
        const res = await request(url, { method: 'POST', headers, body, dispatcher: undiciAgent });
        await res.body.arrayBuffer();
        return res.statusCode;
      },
      close: () => undiciAgent.close(),
    },
    {
      name: 'fetch (Node built-in)',
      post: async (url, body, headers) => {
        const { 'content-length': _length, ...rest } = headers;
        const res = await fetch(url, { method: 'POST', headers: rest, body });
        await res.arrayBuffer();
        return res.status;
      },
      close: () => Promise.resolve(),
    },
  ];
}

async function drive(post: Post, url: string, n: number): Promise<{ seconds: number; cpuUs: number }> {
  const body = JSON.stringify({
    id: randomUUID(),
    type: 'post.publish',
    timestamp: new Date().toISOString(),
    data: {
      postId: randomUUID(),
      jobId: randomUUID(),
      text: 'bench post: the same size as a short webhook delivery',
      link: null,
      media: [],
    },
  });
  let next = 0;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next += 1;
        const status = await post(url, body, headersFor(body));
        if (status !== 200) throw new Error(`receiver answered ${status}`);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return { seconds, cpuUs: used.user + used.system };
}

/** `runs` rounds, each client once per round in turn (alternating, so drift hits all alike). */
export async function compareHttpClients(receiverUrl: string, runs: number, perRun: number): Promise<ClientRun[][]> {
  const url = `${receiverUrl}/hook`;
  const all = clients();
  const out: ClientRun[][] = all.map(() => []);
  // Warm-up: connections opened, code optimised.
  for (const c of all) await drive(c.post, url, 2_000);
  for (let r = 0; r < runs; r++) {
    for (const [i, c] of all.entries()) {
      const { seconds, cpuUs } = await drive(c.post, url, perRun);
      out[i].push({ client: c.name, perSecond: perRun / seconds, cpuUsPerRequest: cpuUs / perRun });
    }
  }
  for (const c of all) await c.close();
  return out;
}
