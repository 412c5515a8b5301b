import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from './support/net';
import { ServiceProcess } from './support/process';

/**
 * Two `npm start`s on one embedded data folder (the real `node dist/src/main.js`, no
 * DATABASE_URL): the one that runs keeps its PostgreSQL; a second start names it and leaves.
 * One folder and one cluster for the whole file (initdb once), so each case costs a Node boot.
 */
describe('one Herald per embedded data folder', () => {
  const API_KEY = 'embedded-owner-test-key-00000';
  let root: string;
  let env: Record<string, string | undefined>;
  let httpPort: number;
  let running: ServiceProcess;
  const started: ServiceProcess[] = [];
  const start = () => {
    const p = ServiceProcess.start(env, httpPort);
    started.push(p);
    return p;
  };
  /** The Herald's own database answers through it: an authorised API call reads its keys. */
  const answers = async (p: ServiceProcess) => {
    const ready = await fetch(`${p.url}/health/ready`);
    const keys = await fetch(`${p.url}/v1/api-keys`, { headers: { Authorization: `Bearer ${API_KEY}` } });
    return { ready: ready.status, keys: keys.status };
  };
  const ownerFile = () => path.join(root, 'postgres.owner.json');

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-owner-'));
    fs.chmodSync(root, 0o755);
    httpPort = await freePort();
    // The same variables for every start, as two `npm start`s in one folder would have.
    env = {
      DATABASE_URL: undefined,
      HERALD_DATA_DIR: root,
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
      HERALD_API_KEY: API_KEY,
      HERALD_SECRET_KEY: 'ab'.repeat(32),
    };
  });
  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop('SIGKILL')));
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a second start beside a running Herald names its pid and port, exits non-zero and leaves its database running', async () => {
    running = start();
    await running.waitReady();
    const second = start();
    expect(await second.exited()).not.toBe(0);
    // After the second one is gone, the first still answers from its database.
    expect(running.running).toBe(true);
    expect(await answers(running)).toEqual({ ready: 200, keys: 200 });
    const said = second.text();
    expect(said).toContain(`Herald (pid ${running.child.pid}, HTTP port ${httpPort}, PostgreSQL port ${env.EMBEDDED_POSTGRES_PORT})`);
    expect(said).toContain(root);
    expect(said).not.toMatch(/stopping it/);
  });

  it('after a kill -9, the next start stops the PostgreSQL left behind, even when the dead pid now names another process', async () => {
    await running.stop('SIGKILL'); // its PostgreSQL keeps running, its ownership record stays
    // After a crash and a reboot the recorded pid may be any live process: here, this test's own.
    const record = JSON.parse(fs.readFileSync(ownerFile(), 'utf8')) as { pid: number };
    fs.writeFileSync(ownerFile(), JSON.stringify({ ...record, pid: process.pid }));

    const next = start();
    await next.waitReady();
    expect(next.text()).toMatch(/from an earlier run still holds/);
    expect(await answers(next)).toEqual({ ready: 200, keys: 200 });
    expect(await next.stop('SIGTERM')).toBe(0);
    // A clean stop stops its PostgreSQL and gives the folder up.
    expect(fs.existsSync(path.join(root, 'postgres', 'postmaster.pid'))).toBe(false);
    expect(fs.existsSync(ownerFile())).toBe(false);
  });

  it('of two started at the same moment, one runs and the other names it and exits', async () => {
    const [a, b] = [start(), start()];
    // The loser exits; the winner stays up. Whichever it is, the loser must name the winner.
    const loser = await Promise.race([a.exited().then(() => a), b.exited().then(() => b)]);
    const winner = loser === a ? b : a;
    expect(await loser.exited()).not.toBe(0);
    expect(loser.text()).toContain(`Herald (pid ${winner.child.pid}, HTTP port ${httpPort}`);
    await winner.waitReady();
    expect(await answers(winner)).toEqual({ ready: 200, keys: 200 });
  });
});
