import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Which Herald runs the embedded PostgreSQL of a data folder: a claim a start takes before it
 * touches the folder, and gives up when it stops.
 *
 * Without it, a second `npm start` in the same folder took the running Herald's PostgreSQL for
 * one left behind by a crash (a live server on our data folder, `postmaster.pid` and all) and
 * stopped it: the first Herald answered 503 until restarted. PostgreSQL's own `postmaster.pid`
 * cannot tell the two apart; the claim can, because it names the Herald process, not the server.
 *
 * The claim is a small JSON file beside the cluster (`<dataDir>.owner.json`, e.g.
 * `.data/postgres.owner.json`):
 * - It is published whole or not at all: written to a private temporary file, then hard-linked
 *   to its name, which fails with EEXIST when a claim is already there (an `O_EXCL` create would
 *   show a half-written file to a start that reads it at that moment). Of two starts at the same
 *   moment exactly one links; the other reads the winner's claim and stops.
 * - A claim whose process is gone (kill -9, a crash, a reboot) is stale: its pid is dead, or is
 *   alive but started at another time than the recorded one (/proc/<pid>/stat), i.e. a recycled
 *   pid. A stale claim is removed and the start tries again; the stale PostgreSQL it left is
 *   then stopped as before (embedded-postgres.ts).
 * - Removing a stale claim is a compare-and-delete, which the file system does not offer: two
 *   starts that both judged the same claim stale could otherwise delete it once and the winner's
 *   fresh claim the second time. The removal runs under a short lock (`mkdir`, atomic), re-reads
 *   the claim under it and deletes it only if it is still the stale one. Nothing else deletes
 *   another process's claim, so between that read and the delete the file cannot change.
 */
export interface FolderOwner {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat); null without /proc. */
  startTime: string | null;
  /** Its HTTP port once known; null before it listens (PORT=0) or for a process with no API. */
  httpPort: number | null;
  postgresPort: number;
}

/** Thrown when a live Herald owns the data folder: the start stops and leaves that one alone. */
export class DataFolderInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: FolderOwner,
  ) {
    const http = owner.httpPort ? `HTTP port ${owner.httpPort}` : 'HTTP port not open yet';
    super(
      `Another Herald (pid ${owner.pid}, ${http}, PostgreSQL port ${owner.postgresPort}) runs the embedded PostgreSQL in ${dataDir}; ` +
        `this start leaves it alone and stops. Stop that Herald first, or give this one its own HERALD_DATA_DIR ` +
        `(and PORT, EMBEDDED_POSTGRES_PORT).`,
    );
    this.name = 'DataFolderInUseError';
  }
}

/** The ownership file of the cluster in `dataDir`. */
export function ownerFilePath(dataDir: string): string {
  return path.join(path.dirname(dataDir), `${path.basename(dataDir)}.owner.json`);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses). */
export function processStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return start && /^\d+$/.test(start) ? start : null;
  } catch {
    return null; // not Linux, or the process is gone
  }
}

/** True when the claim's process still runs: same pid, same start time. Our own pid is never another Herald. */
function ownerRuns(owner: FolderOwner): boolean {
  if (owner.pid === process.pid || !isAlive(owner.pid)) return false;
  const now = processStartTime(owner.pid);
  return owner.startTime === null || now === null || now === owner.startTime;
}

function parseOwner(text: string): FolderOwner | null {
  try {
    const o = JSON.parse(text) as Partial<FolderOwner>;
    const port = (p: unknown) => typeof p === 'number' && Number.isInteger(p) && p > 0 && p < 65536;
    if (!Number.isInteger(o.pid) || (o.pid as number) <= 0 || !port(o.postgresPort)) return null;
    return {
      pid: o.pid as number,
      startTime: typeof o.startTime === 'string' ? o.startTime : null,
      httpPort: port(o.httpPort) ? (o.httpPort as number) : null,
      postgresPort: o.postgresPort as number,
    };
  } catch {
    return null;
  }
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/** Publishes `text` at `file` whole, unless a file is there already (false). */
function publish(file: string, text: string): boolean {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o644 });
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (err) {
    if (errno(err) === 'EEXIST') return false;
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(errno(err) ?? '')) throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  // A file system without hard links: an exclusive create, whose content follows a moment later.
  // A start that reads it empty in that moment takes it for stale, but removeStale() reads it
  // again under its lock and deletes only what it judged: by then it reads the full claim.
  try {
    fs.writeFileSync(file, text, { flag: 'wx', mode: 0o644 });
    return true;
  } catch (err) {
    if (errno(err) === 'EEXIST') return false;
    throw err;
  }
}

/** Deletes the claim at `file` if it still reads `staleText`; false when another start is removing it right now. */
function removeStale(file: string, staleText: string): boolean {
  const lock = `${file}.takeover`;
  try {
    fs.mkdirSync(lock);
  } catch (err) {
    if (errno(err) === 'EEXIST') return false;
    throw err;
  }
  try {
    if (readText(file) === staleText) fs.rmSync(file, { force: true });
    return true;
  } finally {
    fs.rmdirSync(lock);
  }
}

export interface DataFolderClaim {
  readonly owner: FolderOwner;
  /** Records the HTTP port once Herald listens (it may be chosen by the system: PORT=0). */
  recordHttpPort(port: number): void;
  /** Gives the folder up (after its PostgreSQL stopped). */
  release(): void;
}

/**
 * Claims the embedded cluster in `dataDir` for this process, or throws DataFolderInUseError
 * naming the live Herald that holds it. Call it before anything touches the folder.
 */
export async function claimDataFolder(
  dataDir: string,
  ports: { httpPort: number | null; postgresPort: number },
  options: { waitMs?: number } = {},
): Promise<DataFolderClaim> {
  const file = ownerFilePath(dataDir);
  const me: FolderOwner = { pid: process.pid, startTime: processStartTime(process.pid), ...ports };
  const deadline = Date.now() + (options.waitMs ?? 10_000);
  for (;;) {
    if (publish(file, JSON.stringify(me))) return claimOf(file, me);
    const text = readText(file);
    if (text !== null) {
      const owner = parseOwner(text);
      if (owner && ownerRuns(owner)) throw new DataFolderInUseError(dataDir, owner);
      // Stale, or unreadable (a claim is published whole, so no live start wrote this one).
      if (removeStale(file, text)) continue;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Could not claim ${dataDir}: ${file} is stale but ${file}.takeover stays in the way. ` +
          `If no Herald is starting on this folder, remove ${file}.takeover and start again.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function claimOf(file: string, initial: FolderOwner): DataFolderClaim {
  let owner = initial;
  const ours = () => {
    const current = parseOwner(readText(file) ?? '');
    return current !== null && current.pid === owner.pid && current.startTime === owner.startTime;
  };
  return {
    get owner() {
      return owner;
    },
    recordHttpPort(port: number) {
      owner = { ...owner, httpPort: port };
      // Replaced whole (rename is atomic): a start reading it meanwhile sees the old or the new record.
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(owner), { mode: 0o644 });
      fs.renameSync(tmp, file);
    },
    release() {
      // Only the owner deletes a live claim, so reading then deleting cannot remove another's.
      if (ours()) fs.rmSync(file, { force: true });
    },
  };
}
