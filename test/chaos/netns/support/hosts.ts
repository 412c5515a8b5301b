import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Several hosts on one machine: each Herald process gets a network namespace of its own, joined
 * to the machine by a veth pair whose host side is a port of one bridge. The bridge's address is
 * where everything shared lives (the receivers on one address, the PostgreSQL cluster on another);
 * each host has an address of its own on the bridge's /24, so a receiver tells senders apart by
 * source address.
 *
 *   bridge hrld-br  10.231.0.1/24 (receivers), 10.231.0.2/24 (PostgreSQL)
 *   host 1: netns herald-h1, veth hrld-h1 ⇄ eth0 10.231.0.11
 *   host 2: netns herald-h2, veth hrld-h2 ⇄ eth0 10.231.0.12 …
 *
 * Two ways to cut a host off:
 * - `cut(i)`: its link goes down (`ip link set hrld-hN down`): nothing in or out, as if its cable
 *   was pulled; `restore(i)` brings it back.
 * - `partitionDatabase(i)`: only its packets to and from the database address are dropped (two
 *   blackhole rules inside its namespace, one per direction), so it still reaches receivers: the
 *   worst case for a worker that lost its database.
 *
 * Everything is created under fixed names (one suite at a time) and removed by destroy(), which
 * also runs first to clear what a killed run left behind.
 */
export const BRIDGE = 'hrld-br';
export const BRIDGE_ADDRESS = '10.231.0.1';
export const DATABASE_ADDRESS = '10.231.0.2';
const NETNS_PREFIX = 'herald-h';
const VETH_PREFIX = 'hrld-h';

export interface Host {
  readonly index: number;
  readonly netns: string;
  readonly veth: string;
  readonly address: string;
}

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

export class Topology {
  private constructor(readonly hosts: Host[]) {}

  static async create(count: number): Promise<Topology> {
    Topology.destroyLeftovers();
    await ip('link', 'add', BRIDGE, 'type', 'bridge');
    await ip('addr', 'add', `${BRIDGE_ADDRESS}/24`, 'dev', BRIDGE);
    await ip('addr', 'add', `${DATABASE_ADDRESS}/24`, 'dev', BRIDGE);
    await ip('link', 'set', BRIDGE, 'up');
    const hosts: Host[] = [];
    for (let index = 1; index <= count; index++) {
      const host: Host = {
        index,
        netns: `${NETNS_PREFIX}${index}`,
        veth: `${VETH_PREFIX}${index}`,
        address: `10.231.0.${10 + index}`,
      };
      await ip('netns', 'add', host.netns);
      await ip('link', 'add', host.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.netns);
      await ip('link', 'set', host.veth, 'master', BRIDGE, 'up');
      await ip('-n', host.netns, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0');
      await ip('-n', host.netns, 'link', 'set', 'eth0', 'up');
      await ip('-n', host.netns, 'link', 'set', 'lo', 'up');
      hosts.push(host);
    }
    return new Topology(hosts);
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
    await ip('-n', netns, 'rule', 'add', 'to', DATABASE_ADDRESS, 'blackhole');
    await ip('-n', netns, 'rule', 'add', 'from', DATABASE_ADDRESS, 'blackhole');
  }

  async healDatabase(index: number): Promise<void> {
    const { netns } = this.host(index);
    await ip('-n', netns, 'rule', 'del', 'to', DATABASE_ADDRESS, 'blackhole');
    await ip('-n', netns, 'rule', 'del', 'from', DATABASE_ADDRESS, 'blackhole');
  }

  async destroy(): Promise<void> {
    Topology.destroyLeftovers();
    await Promise.resolve();
  }

  /** Removes every namespace and link of ours (deleting a namespace deletes its veth pair). */
  static destroyLeftovers(): void {
    const namespaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
      .split('\n')
      .map((line) => line.split(' ')[0])
      .filter((name) => name.startsWith(NETNS_PREFIX));
    for (const name of namespaces) execFileSync('ip', ['netns', 'del', name]);
    const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
      .split('\n')
      .map((line) => /^\d+: ([^:@]+)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined && (name === BRIDGE || name.startsWith(VETH_PREFIX)));
    // A namespace's veth pair goes with it, a moment later: a link gone meanwhile is fine.
    for (const name of links) {
      try {
        execFileSync('ip', ['link', 'del', name], { stdio: 'ignore' });
      } catch {
        /* deleted with its namespace meanwhile */
      }
    }
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

  static async start(host: string, port: number): Promise<PrivatePostgres> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-netns-pg-'));
    fs.chmodSync(dir, 0o755);
    const data = path.join(dir, 'data');
    fs.mkdirSync(data, { mode: 0o700 });
    execFileSync('chown', ['postgres:postgres', data]);
    const asPostgres = (bin: string, ...args: string[]) => run('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args]);
    await asPostgres('initdb', '-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8');
    fs.appendFileSync(path.join(data, 'pg_hba.conf'), 'host all all 10.231.0.0/24 trust\n');
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
