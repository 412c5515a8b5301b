import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Several hosts on one machine: each Herald process gets a network namespace of its own, joined
 * to the machine by a veth pair whose host side is a port of one bridge. The bridge's addresses
 * are where everything shared lives (the receivers on one address, the PostgreSQL cluster on
 * another); each host has an address of its own on the bridge's /24, so a receiver tells senders
 * apart by source address. A run takes a free 10.231.N.0/24 and names carrying its pid, so two
 * runs at once (two checkouts running the fault suite) never meet:
 *
 *   bridge hb<pid>  10.231.N.1/24 (receivers), 10.231.N.2/24 (PostgreSQL)
 *   host 1: netns herald-<pid>-h1, veth hv<pid>h1 ⇄ eth0 10.231.N.11
 *   host 2: netns herald-<pid>-h2, veth hv<pid>h2 ⇄ eth0 10.231.N.12 …
 *
 * Two ways to cut a host off:
 * - `cut(i)`: its link goes down (`ip link set hv<pid>h<i> down`): nothing in or out, as if its
 *   cable was pulled; `restore(i)` brings it back.
 * - `partitionDatabase(i)`: only its packets to and from the database address are dropped (two
 *   blackhole rules inside its namespace, one per direction), so it still reaches receivers: the
 *   worst case for a worker that lost its database.
 *
 * destroy() removes it all; create() first removes what runs that no longer exist left behind.
 */
export interface Host {
  readonly index: number;
  readonly netns: string;
  readonly veth: string;
  readonly address: string;
}

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function names(): { namespaces: string[]; links: string[] } {
  const namespaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.split(' ')[0])
    .filter((name) => /^herald-\d+-h\d+$/.test(name));
  const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\d+: ([^:@]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && /^(hb\d+|hv\d+h\d+)$/.test(name));
  return { namespaces, links };
}

/** Removes the namespaces and links of runs for which `gone(pid)` holds (deleting a namespace deletes its veth pair). */
function removeWhere(gone: (pid: number) => boolean): void {
  const pidOf = (name: string) => Number(/\d+/.exec(name)?.[0]);
  const { namespaces, links } = names();
  for (const name of namespaces.filter((n) => gone(pidOf(n)))) execFileSync('ip', ['netns', 'del', name]);
  for (const name of links.filter((n) => gone(pidOf(n)))) {
    try {
      execFileSync('ip', ['link', 'del', name], { stdio: 'ignore' });
    } catch {
      /* deleted with its namespace meanwhile */
    }
  }
}

/** A 10.231.N.0/24 no address of this machine is in. */
function freeSubnet(): number {
  const used = new Set(
    [...execFileSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'utf8' }).matchAll(/inet 10\.231\.(\d+)\./g)].map((m) => Number(m[1])),
  );
  const free = Array.from({ length: 250 }, (_, i) => i + 1).filter((n) => !used.has(n));
  if (free.length === 0) throw new Error('no free 10.231.N.0/24 left');
  return free[Math.floor(Math.random() * free.length)];
}

export class Topology {
  private constructor(
    readonly hosts: Host[],
    readonly bridge: string,
    /** Where receivers listen. */
    readonly receiverAddress: string,
    /** Where PostgreSQL listens. */
    readonly databaseAddress: string,
    /** The /24 every address is in, e.g. 10.231.7.0/24. */
    readonly subnet: string,
  ) {}

  static async create(count: number): Promise<Topology> {
    removeWhere((pid) => !alive(pid) || pid === process.pid);
    const n = freeSubnet();
    const bridge = `hb${process.pid}`;
    const topology = new Topology([], bridge, `10.231.${n}.1`, `10.231.${n}.2`, `10.231.${n}.0/24`);
    try {
      await ip('link', 'add', bridge, 'type', 'bridge');
      await ip('addr', 'add', `${topology.receiverAddress}/24`, 'dev', bridge);
      await ip('addr', 'add', `${topology.databaseAddress}/24`, 'dev', bridge);
      await ip('link', 'set', bridge, 'up');
      for (let index = 1; index <= count; index++) {
        const host: Host = {
          index,
          netns: `herald-${process.pid}-h${index}`,
          veth: `hv${process.pid}h${index}`,
          address: `10.231.${n}.${10 + index}`,
        };
        await ip('netns', 'add', host.netns);
        topology.hosts.push(host);
        await ip('link', 'add', host.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.netns);
        await ip('link', 'set', host.veth, 'master', bridge, 'up');
        await ip('-n', host.netns, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0');
        await ip('-n', host.netns, 'link', 'set', 'eth0', 'up');
        await ip('-n', host.netns, 'link', 'set', 'lo', 'up');
      }
    } catch (err) {
      await topology.destroy();
      throw err;
    }
    return topology;
  }

  host(index: number): Host {
    const host = this.hosts.find((h) => h.index === index);
    if (!host) throw new Error(`no host ${index}`);
    return host;
  }

  /** Pulls the host's cable: its veth goes down. */
  async cut(index: number): Promise<void> {
    await ip('link', 'set', this.host(index).veth, 'down');
  }

  async restore(index: number): Promise<void> {
    await ip('link', 'set', this.host(index).veth, 'up');
  }

  /** Drops every packet between the host and the database address, both ways; the rest flows. */
  async partitionDatabase(index: number): Promise<void> {
    const { netns } = this.host(index);
    await ip('-n', netns, 'rule', 'add', 'to', this.databaseAddress, 'blackhole');
    await ip('-n', netns, 'rule', 'add', 'from', this.databaseAddress, 'blackhole');
  }

  async healDatabase(index: number): Promise<void> {
    const { netns } = this.host(index);
    await ip('-n', netns, 'rule', 'del', 'to', this.databaseAddress, 'blackhole');
    await ip('-n', netns, 'rule', 'del', 'from', this.databaseAddress, 'blackhole');
  }

  async destroy(): Promise<void> {
    removeWhere((pid) => pid === process.pid);
    await Promise.resolve();
  }
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL 15 cluster of the suite's own (initdb in a temporary folder, run as the `postgres`
 * user), listening only on the bridge address: the machine's shared server is never touched.
 */
export class PrivatePostgres {
  private constructor(
    private readonly dir: string,
    readonly host: string,
    readonly port: number,
  ) {}

  /** Listens on `host` only; trusts connections from `subnet`. */
  static async start(host: string, port: number, subnet: string): Promise<PrivatePostgres> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-netns-pg-'));
    fs.chmodSync(dir, 0o755);
    const data = path.join(dir, 'data');
    fs.mkdirSync(data, { mode: 0o700 });
    execFileSync('chown', ['postgres:postgres', data]);
    const asPostgres = (bin: string, ...args: string[]) => run('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args]);
    await asPostgres('initdb', '-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8');
    fs.appendFileSync(path.join(data, 'pg_hba.conf'), `host all all ${subnet} trust\n`);
    const options = [
      `-c listen_addresses=${host}`,
      `-p ${port}`,
      `-c unix_socket_directories=${data}`,
      '-c max_connections=300',
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
    ].join(' ');
    await asPostgres('pg_ctl', '-D', data, '-l', path.join(data, 'server.log'), '-o', options, '-w', 'start');
    return new PrivatePostgres(dir, host, port);
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@${this.host}:${this.port}/${database}`;
  }

  async stop(): Promise<void> {
    const data = path.join(this.dir, 'data');
    await run('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop']).catch(
      () => undefined,
    );
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
