/**
 * Two projects: `unit` (pure functions beside their source, no database) and
 * `integration` (real PostgreSQL, one fresh database per test file, real HTTP).
 * The global setup starts the embedded PostgreSQL when DATABASE_URL is unset and
 * migrates a template database that every integration file clones.
 *
 * ts-jest transpiles each file on its own (tsconfig.json has `isolatedModules: true`) and
 * checks no types: `npm run typecheck` (tsc over src, test, bench and migrations) does, and
 * .ci/run runs it. Type-checking every file inside jest made the suite about twice as slow.
 */
const os = require('node:os');
const vm = require('node:vm');

// The @atproto packages (the Bluesky connector, its OAuth client, the test PDS) are ES modules,
// loaded with require(). Jest does that itself, natively, only on Node 24.9 or later started with
// --experimental-vm-modules; without it, every test that boots the app fails on "Must use import
// to load ES Module". `npm test` (scripts/node24.js) runs jest that way, on any Node.
if (typeof vm.SourceTextModule?.prototype.hasAsyncGraph !== 'function') {
  throw new Error(
    `Herald's tests need Node.js 24.9+ with --experimental-vm-modules (this is ${process.version}${vm.SourceTextModule ? '' : ', without it'}): run them with \`npm test -- <files and jest options>\`, which sees to both.`,
  );
}

const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];

module.exports = {
  // Tests and hooks (an app, a browser, a PDS or a service process booting) get five minutes: a
  // deadline to end a test that went wrong, not a measure of speed. On a machine shared with
  // other test runs (load averages of 20 to 30 on two cores seen here), booting an app has taken
  // over a minute, and a browser, a PDS and an app together over two. Waits inside tests have
  // their own deadlines (test/support/poll.ts).
  testTimeout: 300_000,
  // A worker per core and one more. Tests wait on the events they check (test/support/poll.ts),
  // never on a fixed time, so another worker beside them changes how long they take, not what
  // they see. Much of the suite waits (for a minute to come, a lease to lapse, a child process, a
  // browser): on a quiet two-core machine, one after the other, the whole suite took 387 s with
  // two workers (the jest tree at 106 % of the cores), 287 s with three (118 %) and 232 s with
  // four (141 %). Four is not kept: the suite has since become bound by CPU (the machine busy
  // 1.79 of its 2 cores over a run, docs/benchmarks.md), and four workers on Node 24 took as
  // long as three (453.7 s against 437.7–455.4 s) for 14 % more CPU.
  maxWorkers: (os.availableParallelism?.() ?? os.cpus().length) + 1,
  // A worker whose heap holds more than this after a file is replaced by a fresh one before its
  // next file. Each integration file loads the whole application into its own module registry,
  // and a worker grew past 2.4 GB (RSS) by the end of a run. Tearing such a process down took
  // ~770 ms after its last file, longer than the 500 ms jest waits before it kills a worker and
  // prints "A worker process has failed to exit gracefully" (every full run did). With a 1 GB
  // limit the workers ended at 1.1 to 1.5 GB and exited 340 to 420 ms after jest asked: 800 MB
  // keeps more room under the 500 ms.
  workerIdleMemoryLimit: '800MB',
  transform: { '^.+\\.ts$': tsJest },
  // Files whose tests wait for a minute of the wall clock start first (test/support/sequencer.js).
  testSequencer: '<rootDir>/test/support/sequencer.js',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      roots: ['<rootDir>/src'],
      testMatch: ['**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
  ],
};
