// Jest in CommonJS mode: @swc/jest compiles our TS and turns the ESM-only dependencies into CJS
// (Jest's ESM mode cannot load Nest 12 on Node 20; see shared/design/dependencies.md §4).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.(t|j|mj)s$': swc },
  // ESM-only packages are transformed wherever npm puts them (light-my-request nests its own `cookie`).
  transformIgnorePatterns: [
    '^(?!.*/node_modules/(@nestjs|@apidevtools|file-type|content-disposition|cookie)/).*/node_modules/',
  ],
  setupFiles: ['reflect-metadata'],
  // Every run captures all gateway logs and scans them for keys afterwards (test/observability/log-capture.ts).
  globalSetup: '<rootDir>/test/observability/log-capture.global-setup.ts',
  globalTeardown: '<rootDir>/test/observability/log-capture.global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/observability/log-capture.setup.ts'],
  testTimeout: 30000,
  // Suites start servers and child processes; two workers match the two cores.
  maxWorkers: 2,
};
