import * as http from 'node:http';

/**
 * Benchmark receiver, in its own process: answers every POST with 200 `{}` (keep-alive) and
 * records when each idempotency key arrived. Control: GET /__stats, POST /__reset.
 * Prints `PORT <n>` on stdout when listening.
 */
let count = 0;
let first = 0;
let last = 0;
let arrivals = new Map<string, number>();
let keepArrivals = false;

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/__stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ count, first, last, arrivals: keepArrivals ? Object.fromEntries(arrivals) : {} }));
    return;
  }
  if (req.method === 'POST' && req.url?.startsWith('/__reset')) {
    count = 0;
    first = 0;
    last = 0;
    arrivals = new Map();
    keepArrivals = req.url.includes('arrivals=1');
    res.end('{}');
    return;
  }
  req.on('data', () => undefined);
  req.on('end', () => {
    const now = Date.now();
    count += 1;
    if (first === 0) first = now;
    last = now;
    if (keepArrivals) {
      const key = req.headers['idempotency-key'];
      if (typeof key === 'string' && !arrivals.has(key)) arrivals.set(key, now);
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
    res.end('{}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') process.stdout.write(`PORT ${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
