import * as http from 'node:http';
import { run } from 'graphile-worker';
import { Webhook } from 'standardwebhooks';

/**
 * graphile-worker doing the same work as a Herald webhook attempt: build the signed JSON,
 * POST it with keep-alive to the receiver, fail on non-2xx. Run in its own process, like
 * Herald's worker. argv: <connectionString> <mode: default|batched> <concurrency>
 * Prints READY when the worker runs; exits on SIGTERM.
 */
const [connectionString, mode, concurrencyText] = process.argv.slice(2);
const concurrency = Number(concurrencyText ?? '100');
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const signer = new Webhook(secret);

function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
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
    ...(mode === 'batched' ? { preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } } : {}),
    taskList: {
      deliver: async (payload) => {
        const p = payload as { url: string; key: string; text: string };
        const now = new Date();
        const body = JSON.stringify({ id: p.key, type: 'post.publish', timestamp: now.toISOString(), data: { text: p.text } });
        const signature = signer.sign(p.key, now, body);
        const status = await post(p.url, body, {
          'content-type': 'application/json',
          'idempotency-key': p.key,
          'webhook-id': p.key,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signature,
        });
        if (status < 200 || status >= 300) throw new Error(`HTTP ${status}`);
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
