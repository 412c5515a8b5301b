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
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];

module.exports = {
  testTimeout: 60000,
  // One test file per core. Jest's default (one fewer than the cores: a single worker on CI's two
  // cores) leaves a core idle while files wait on child processes, timers, HTTP and PostgreSQL;
  // each file has its own database and its own ports, so files run side by side.
  maxWorkers: '100%',
  transform: { '^.+\\.ts$': tsJest },
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
