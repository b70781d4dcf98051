// @ts-check
/**
 * One in-memory Temporal dev server is started for the whole run by the global setup (test/global-setup.ts)
 * and shared by all workers; test files isolate themselves with unique task queues / workflow ids.
 * @type {import('jest').Config}
 */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  // Integration tests start workers and wait for workflows: jest's 5 s default is far too short.
  testTimeout: 60_000,
  globalSetup: './test/global-setup.ts',
  globalTeardown: './test/global-teardown.ts',
  // Each worker runs Temporal workers (native threads + webpack bundling); two is what a 2-core CI box bears.
  maxWorkers: 2,
};
