import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A real Bluesky PDS (and PLC directory) on loopback from `@atproto/dev-env` 0.6.x (Node 22 and
 * later; an ES module, which jest loads through Node 24's require(esm): scripts/node24.js).
 * SQLite, no network, ~0.1 s to start. The PDS writes its data and
 * blob folders into os.tmpdir(), so TMPDIR points at a folder of ours while it starts and that
 * folder is removed on close.
 */

type DevEnv = typeof import('@atproto/dev-env');
type Network = InstanceType<DevEnv['TestNetworkNoAppView']>;

export interface TestBskyAccount {
  did: string;
  handle: string;
  /** The account's main password (never given to Herald). */
  password: string;
  /** An app password, as a user would create one for Herald. */
  appPassword: string;
  appPasswordName: string;
}

export interface TestPdsHandle {
  url: string;
  network: Network;
  createAccount(handlePrefix: string): Promise<TestBskyAccount>;
  /** An agent logged in with the account's main password (to read, revoke, inspect). */
  ownerAgent(account: TestBskyAccount): Promise<import('@atproto/api').AtpAgent>;
  close(): Promise<void>;
}

export async function startPds(options: { rateLimitsEnabled?: boolean } = {}): Promise<TestPdsHandle> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-pds-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { TestNetworkNoAppView } = require('@atproto/dev-env') as DevEnv;
  let network: Network;
  try {
    network = await TestNetworkNoAppView.create({ pds: { rateLimitsEnabled: options.rateLimitsEnabled ?? false } });
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
  let n = 0;
  const handle: TestPdsHandle = {
    url: network.pds.url,
    network,
    async createAccount(handlePrefix) {
      n += 1;
      const agent = network.pds.getAgent();
      const password = `main-password-${n}`;
      const res = await agent.createAccount({ email: `${handlePrefix}${n}@herald.test`, handle: `${handlePrefix}${n}.test`, password });
      const appPasswordName = `herald-${n}`;
      const app = await agent.com.atproto.server.createAppPassword({ name: appPasswordName });
      return { did: res.data.did, handle: res.data.handle, password, appPassword: app.data.password, appPasswordName };
    },
    async ownerAgent(account) {
      const agent = network.pds.getAgent();
      await agent.login({ identifier: account.handle, password: account.password });
      return agent;
    },
    async close() {
      await network.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
  return handle;
}
