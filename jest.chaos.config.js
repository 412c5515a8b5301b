/**
 * The fault suite (`npm run test:chaos`): real Herald processes, real PostgreSQL servers of the
 * tests' own, PgBouncer, kill -9, SIGSTOP. Same global setup as the main suite (a PostgreSQL
 * server, the migrated template database, the compiled service in dist/). Files run one at a
 * time: each one loads the machine on purpose, and their figures mean more alone.
 * CHAOS_SCALE (default 1, the full sizes) scales the work; CI runs a smaller one.
 * Transpiled without type checks, as in jest.config.js (`npm run typecheck` checks the types).
 */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];

module.exports = {
  testTimeout: 1_800_000,
  maxWorkers: 1,
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': tsJest },
  globalSetup: '<rootDir>/test/chaos/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  roots: ['<rootDir>/test/chaos'],
  testMatch: ['**/*.chaos.ts'],
};
