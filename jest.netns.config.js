/**
 * The several-hosts part of the fault suite (test/chaos/netns): Herald processes in network
 * namespaces sharing one PostgreSQL. Needs root (ip netns, tc). One file at a time: the suite
 * owns fixed namespace and link names. The global setup builds dist/ (the processes run it).
 */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json', isolatedModules: false }];

module.exports = {
  testTimeout: 600000,
  maxWorkers: 1,
  transform: { '^.+\\.ts$': tsJest },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/chaos/netns'],
  testMatch: ['**/*.chaos.ts'],
};
