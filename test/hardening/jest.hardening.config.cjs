// The hardening tier (`npm run test:hardening`, issue 18): the root config's transform and log capture,
// over test/hardening only, with a global setup/teardown of its own that builds dist/ once, collects each
// suite's figures and prints the summary table. The soak (`npm run soak`) is a script, not a suite.
const path = require('node:path');
const root = require('../../jest.config.cjs');

module.exports = {
  ...root,
  rootDir: path.resolve(__dirname, '../..'),
  roots: ['<rootDir>/test/hardening'],
  testMatch: ['**/*.spec.ts'],
  globalSetup: '<rootDir>/test/hardening/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/hardening/support/global-teardown.ts',
  testTimeout: 120_000,
  // Suites time deadlines to 100 ms and start gateways, fleets and Redis: one at a time on a shared box.
  maxWorkers: 1,
};
