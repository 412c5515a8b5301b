import * as http from 'node:http';
import { run } from 'graphile-worker';
import { Webhook } from 'standardwebhooks';
import { HISTORY_INSERT } from './history-table';

/**
 * graphile-worker doing the same work as a Herald webhook attempt: build the signed JSON,
 * POST it with keep-alive to the receiver, fail on non-2xx. Run in its own process, like
 * Herald's worker. argv: <connectionString> <mode: default|batched|history> <concurrency>
 * Prints READY when the worker runs; exits on SIGTERM.
 *
 * `history`: batched, and the task also inserts the attempt's row into `delivery_attempts`
 * (bench/history-table.ts: the columns and indexes of Herald's `attempts`), one INSERT per attempt
 * through the task's helpers, as a user of graphile-worker who keeps a delivery history would.
 * graphile-worker deletes a job when it completes, so the history is the only record left.
 */

const [connectionString, mode, concurrencyText] = process.argv.slice(2);
const concurrency = Number(concurrencyText ?? '100');
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const signer = new Webhook(secret);
const worker = `bench-host:${process.pid}`;

function post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; excerpt: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let excerpt = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        if (excerpt.length < 2048) excerpt += d.slice(0, 2048 - excerpt.length);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, excerpt }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const runner = await run({
    connectionString,
    concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    ...(mode === 'batched' || mode === 'history'
      ? { preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } }
      : {}),
    taskList: {
      deliver: async (payload, helpers) => {
        const p = payload as { url: string; key: string; text: string };
        const now = new Date();
        const body = JSON.stringify({ id: p.key, type: 'post.publish', timestamp: now.toISOString(), data: { text: p.text } });
        const signature = signer.sign(p.key, now, body);
        const { status, excerpt } = await post(p.url, body, {
          'content-type': 'application/json',
          'idempotency-key': p.key,
          'webhook-id': p.key,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signature,
        });
        const ok = status >= 200 && status < 300;
        if (mode === 'history') {
          const finished = new Date();
          await helpers.query(HISTORY_INSERT, [
            helpers.job.id,
            helpers.job.attempts,
            now,
            finished,
            status,
            ok ? 'success' : 'transient',
            ok ? 'succeed' : 'retry',
            finished.getTime() - now.getTime(),
            excerpt,
            p.key,
            worker,
          ]);
        }
        if (!ok) throw new Error(`HTTP ${status}`);
      },
    },
  });
  process.stdout.write('READY\n');
  process.on('SIGTERM', () => void runner.stop().then(() => process.exit(0)));
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
