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
  // Jest's default: one fewer worker than the cores, so a single one on CI's two cores. Two
  // workers ran the suite in 357–409 s instead of 526 s, green three times on a quiet machine,
  // but two timing-bound files failed with two workers on a machine loaded by other work
  // (queue-processes' half-open burst, engine-leases' disable while jobs wait); they go back to
  // two workers once those tests wait on the events they check instead of on time.
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
