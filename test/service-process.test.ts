import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase } from './support/database';
import { freePort } from './support/net';
import { ServiceProcess } from './support/process';

/** The real `node dist/src/main.js`, as `npm start` runs it. */
describe('the service process', () => {
  const started: ServiceProcess[] = [];
  const start = (env: Record<string, string | undefined>, port: number) => {
    const p = ServiceProcess.start(env, port);
    started.push(p);
    return p;
  };
  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop('SIGKILL')));
  });

  it.each<[Record<string, string>, RegExp]>([
    [{ PORT: 'eighty' }, /PORT must be a whole number/],
    [{ PORT: '99999' }, /PORT must be a whole number between 0 and 65535/],
    [{ DATABASE_URL: 'definitely not a url' }, /DATABASE_URL is not a valid URL/],
    [{ DATABASE_URL: 'mysql://root@127.0.0.1/test' }, /DATABASE_URL must use postgres: or postgresql:/],
    [{ HERALD_SECRET_KEY: 'abc' }, /HERALD_SECRET_KEY must be 32 random bytes/],
  ])('refuses to start with %j and names the variable', async (env, message) => {
    const q = start(env, 0);
    const code = await q.exited();
    expect(code).toBe(78);
    expect(q.text()).toMatch(message);
  });

  it('never writes an API key to its log, even when requests use it', async () => {
    const { url } = await createTestDatabase();
    const key = 'log-test-bootstrap-key-5f2a9c1e7b';
    const port = await freePort();
    const p = start({ DATABASE_URL: url, HERALD_API_KEY: key, LOG_LEVEL: 'trace', HERALD_SECRET_KEY: 'cd'.repeat(32) }, port);
    await p.waitReady();
    const created = await fetch(`${p.url}/v1/api-keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'logged?' }),
    });
    expect(created.status).toBe(201);
    const newKey = ((await created.json()) as { key: string }).key;
    await fetch(`${p.url}/v1/api-keys?token=${newKey}`, { headers: { Authorization: `Bearer ${newKey}` } });
    await fetch(`${p.url}/v1/api-keys`, { headers: { Authorization: `Bearer ${key}x` } });
    expect(await p.stop('SIGTERM')).toBe(0);
    const log = p.text();
    expect(log).toContain('request completed'); // the requests were logged…
    expect(log).not.toContain(key); // …without the keys
    expect(log).not.toContain(newKey);
    expect(log).not.toContain('cd'.repeat(32));
  });

  it('with no DATABASE_URL, starts the embedded PostgreSQL, survives a kill -9 and reuses its data', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-embedded-'));
    fs.chmodSync(dataDir, 0o755);
    try {
      const env = {
        DATABASE_URL: undefined,
        HERALD_DATA_DIR: dataDir,
        EMBEDDED_POSTGRES_PORT: String(await freePort()),
        HERALD_API_KEY: 'embedded-test-key-000000000',
      };
      const first = start(env, await freePort());
      await first.waitReady(60_000);
      expect(fs.existsSync(path.join(dataDir, 'secret.key'))).toBe(true);
      const created = await fetch(`${first.url}/v1/workspaces`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${env.HERALD_API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'survives restarts' }),
      });
      expect(created.status).toBe(201);
      const newKey = ((await created.json()) as { apiKey: { key: string } }).apiKey.key;
      // kill -9 leaves the embedded PostgreSQL running with its postmaster.pid
      await first.stop('SIGKILL');

      const second = start(env, await freePort());
      await second.waitReady(60_000);
      expect(second.text()).toMatch(/from an earlier run still holds/);
      const res = await fetch(`${second.url}/v1/api-keys`, { headers: { Authorization: `Bearer ${newKey}` } });
      expect(res.status).toBe(200);
      expect(await second.stop('SIGTERM')).toBe(0);
      expect(second.text()).toContain('stopped');
      // The embedded server stopped with the service: its pid file is gone.
      expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
