import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { createTestDatabase } from './support/database';
import { freePort } from './support/net';
import { ROOT, ServiceProcess } from './support/process';
import { waitUntil } from './support/poll';

/**
 * What the person at the terminal sees: `npm start` on a TTY prints readable lines, JSON lines
 * when the output is not a terminal or when LOG_FORMAT=json says so, and no secret either way.
 * A real pseudo-terminal comes from util-linux `script`.
 */

// Colour codes start with ESC: matching them is the point here.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;
const JSON_LINE = /^\{"level":/m;

interface Run {
  output: () => string;
  stop: () => Promise<void>;
}

/** `node dist/src/main.js` inside a pseudo-terminal, as `npm start` in a terminal window runs it. */
function startOnTerminal(env: Record<string, string>, port: number): Run {
  const command = `${process.execPath} ${path.join(ROOT, 'dist/src/main.js')}`;
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...env, PORT: String(port) })) {
    if (v !== undefined && k !== 'DATABASE_URL') clean[k] = v;
  }
  if (env.DATABASE_URL) clean.DATABASE_URL = env.DATABASE_URL;
  const child: ChildProcess = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: ROOT,
    env: clean,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const chunks: string[] = [];
  child.stdout?.on('data', (d: Buffer) => chunks.push(d.toString('utf8')));
  child.stderr?.on('data', (d: Buffer) => chunks.push(d.toString('utf8')));
  // 'close', not 'exit': the process gone and its pipes closed, so nothing is left open after stop().
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    output: () => chunks.join('').replace(ANSI, '').replace(/\r/g, ''),
    stop: async () => {
      // The whole group: `script` and the service on its terminal both get SIGTERM, as Ctrl-C would.
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
      await exited;
    },
  };
}

async function ready(port: number): Promise<void> {
  await waitUntil(
    async () => (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null))?.status === 200,
    30_000,
    'the service to be ready',
  );
}

/** A key made through the API, then requests that carry it (and a token in a query string). */
async function useSecrets(port: number, bootstrapKey: string): Promise<string> {
  const base = `http://127.0.0.1:${port}`;
  const created = await fetch(`${base}/v1/api-keys`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${bootstrapKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'terminal' }),
  });
  expect(created.status).toBe(201);
  const key = ((await created.json()) as { key: string }).key;
  expect((await fetch(`${base}/v1/api-keys`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
  // Someone pastes the key into a query string: refused (unknown parameter), and never logged.
  expect((await fetch(`${base}/v1/api-keys?token=${key}`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(400);
  expect((await fetch(`${base}/v1/posts/nope`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(404);
  return key;
}

const SECRET_KEY = 'ef'.repeat(32);

describe('logs for the person at the terminal', () => {
  const runs: Run[] = [];
  afterAll(async () => {
    await Promise.all(runs.map((r) => r.stop()));
  });

  it('on a terminal, prints the first-start banner and readable lines, not JSON, and no secret', async () => {
    const { url } = await createTestDatabase();
    const port = await freePort();
    const run = startOnTerminal({ DATABASE_URL: url, HERALD_SECRET_KEY: SECRET_KEY }, port);
    runs.push(run);
    await ready(port);
    // The first start of an empty database prints its bootstrap key once, in the banner.
    await waitUntil(() => /hk_[A-Za-z0-9_-]{20,}/.test(run.output()), 10_000, 'the banner');
    const bootstrapKey = /hk_[A-Za-z0-9_-]{20,}/.exec(run.output())?.[0] ?? '';
    const key = await useSecrets(port, bootstrapKey);
    await waitUntil(() => /GET \/v1\/posts\/nope 404/.test(run.output()), 10_000, 'the request lines');
    await run.stop();

    const out = run.output();
    expect(out).not.toMatch(JSON_LINE);
    expect(out).not.toContain('Mapped {'); // Nest's route-by-route start-up lines are debug
    expect(out).toMatch(/\[NestApplication\] Nest application successfully started/);
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: POST \/v1\/api-keys 201 \d+ ms$/m);
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/v1\/api-keys 200 \d+ ms$/m);
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: GET \/v1\/posts\/nope 404 \d+ ms$/m);
    expect(out).toMatch(/Herald is listening on http:\/\/localhost:\d+/);
    expect(out.split(bootstrapKey)).toHaveLength(2); // once: in the banner, never in a log line
    expect(out).not.toContain(key);
    expect(out).not.toContain('token=');
    expect(out).not.toContain(SECRET_KEY);
  });

  it('on a terminal with LOG_FORMAT=json, prints JSON lines', async () => {
    const { url } = await createTestDatabase();
    const port = await freePort();
    const bootstrapKey = 'terminal-json-bootstrap-key-3c9d1e';
    const run = startOnTerminal(
      { DATABASE_URL: url, HERALD_SECRET_KEY: SECRET_KEY, HERALD_API_KEY: bootstrapKey, LOG_FORMAT: 'json' },
      port,
    );
    runs.push(run);
    await ready(port);
    const key = await useSecrets(port, bootstrapKey);
    await waitUntil(() => /"path":"\/v1\/posts\/nope"/.test(run.output()), 10_000, 'the request lines');
    await run.stop();
    const out = run.output();
    const line = out.split('\n').find((l) => l.includes('"path":"/v1/posts/nope"')) ?? '';
    expect(JSON.parse(line)).toMatchObject({
      level: 40,
      msg: 'request completed',
      req: { method: 'GET', path: '/v1/posts/nope' },
      res: { statusCode: 404 },
    });
    expect(out).not.toContain(key);
    expect(out).not.toContain(bootstrapKey);
  });

  it('into a pipe with LOG_FORMAT=pretty, prints readable lines without secrets', async () => {
    const { url } = await createTestDatabase();
    const port = await freePort();
    const bootstrapKey = 'pipe-pretty-bootstrap-key-8a7b6c5d';
    const p = ServiceProcess.start(
      { DATABASE_URL: url, HERALD_SECRET_KEY: SECRET_KEY, HERALD_API_KEY: bootstrapKey, LOG_FORMAT: 'pretty', LOG_LEVEL: 'trace' },
      port,
    );
    runs.push({ output: () => p.text(), stop: async () => void (await p.stop('SIGTERM')) });
    await p.waitReady();
    const key = await useSecrets(port, bootstrapKey);
    await waitUntil(() => /GET \/v1\/posts\/nope 404/.test(p.text()), 10_000, 'the request lines');
    expect(await p.stop('SIGTERM')).toBe(0);
    const out = p.text();
    expect(out).not.toMatch(JSON_LINE);
    expect(out).toMatch(/INFO: GET \/v1\/api-keys 200 \d+ ms/);
    expect(out).not.toMatch(ANSI); // no colours into a pipe
    for (const secret of [key, bootstrapKey, SECRET_KEY, 'token=']) expect(out).not.toContain(secret);
  });
});
