// Jest in CommonJS mode: @swc/jest compiles our TS and turns the ESM-only dependencies into CJS
// (Jest's ESM mode cannot load Nest 12 on Node 20).
//
// The suite is split into tiers, one Jest project each, picked by the file name's last part:
//   unit        *.spec.ts                in memory: no process, server or socket (not even on loopback)
//   e2e         *.e2e.spec.ts            real sockets and processes: the whole gateway (in-process or as
//                                        `node dist/main.js`), a fake upstream or the transport over loopback,
//                                        the repository's scripts and ESLint run as child processes
//   redis       *.redis.spec.ts          shared state in a real Redis
//   fleet       *.fleet.spec.ts          several gateway processes + Redis (the fleet faults among them)
//   postgres    *.postgres.spec.ts       the system of record in a real PostgreSQL (a database per file)
//   browser     *.chromium.spec.ts       Debian's headless Chromium
//   bench-smoke test/bench/*.smoke.spec.ts  one short run of the benchmark harness
//   hardening   test/hardening/**        vendor faults, fuzzing, leaks, defect regressions (`npm run
//                                        test:hardening` adds the fleet and state faults of the fleet and
//                                        postgres tiers to its table)
//   deploy      *.deploy.spec.ts         the Helm chart rendered by the real helm and validated offline
// `npm test` runs them all; `npm run test:<tier>` one (`jest --selectProjects <tier>`).
// Suites that need a system part beyond `npm ci` (Chromium, redis-server, …) declare it with describeNeeding
// (test/helpers/system-parts.ts): skipped off CI when it is missing, listed at the end by the reporter below.
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

const TIER_SUFFIX = /\.(e2e|redis|fleet|postgres|chromium|smoke|deploy)\.spec\.ts$/;

/** Settings every tier shares. */
const base = {
  testEnvironment: 'node',
  rootDir: __dirname,
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.(t|j|mj)s$': swc },
  // ESM-only packages are transformed wherever npm puts them (light-my-request nests its own `cookie`;
  // openapi-typescript's CommonJS build requires four ESM-only packages).
  transformIgnorePatterns: [
    '^(?!.*/node_modules/(@nestjs|@apidevtools|file-type|content-disposition|cookie|node-pg-migrate|jose|change-case|parse-json|index-to-position|supports-color)/).*/node_modules/',
  ],
  setupFiles: ['reflect-metadata'],
  // Every run captures all gateway logs and scans them for keys afterwards (test/observability/log-capture.ts).
  setupFilesAfterEnv: ['<rootDir>/test/observability/log-capture.setup.ts'],
};

/** Tiers that start `node dist/main.js` build it first, once, outside any test (test/support/build.global-setup.ts). */
const builds = { globalSetup: '<rootDir>/test/support/build.global-setup.ts' };

const tier = (displayName, testMatch, extra = {}) => ({
  ...base,
  displayName,
  roots: ['<rootDir>/test'],
  testMatch,
  ...extra,
});

const unit = tier('unit', ['**/*.spec.ts'], {
  testPathIgnorePatterns: ['/node_modules/', TIER_SUFFIX.source, '/test/hardening/', '/test/bench/'],
  // A unit test that starts a process, a server or a socket fails (test/support/unit-isolation.setup.ts).
  setupFilesAfterEnv: [...base.setupFilesAfterEnv, '<rootDir>/test/support/unit-isolation.setup.ts'],
});

module.exports = {
  projects: [
    unit,
    tier('e2e', ['**/*.e2e.spec.ts'], {
      ...builds,
      testPathIgnorePatterns: ['/node_modules/', '/test/hardening/'],
    }),
    tier('redis', ['**/*.redis.spec.ts'], { testPathIgnorePatterns: ['/node_modules/', '/test/hardening/'] }),
    tier('fleet', ['**/*.fleet.spec.ts'], {
      ...builds,
      testPathIgnorePatterns: ['/node_modules/', '/test/hardening/'],
    }),
    tier('postgres', ['**/*.postgres.spec.ts'], {
      ...builds,
      testPathIgnorePatterns: ['/node_modules/', '/test/hardening/'],
    }),
    tier('browser', ['**/*.chromium.spec.ts']),
    // Its own global hooks: the shared build, and the tier's summary table (in test/support/ with Jest's
    // other hooks).
    tier('hardening', ['<rootDir>/test/hardening/**/*.spec.ts'], {
      globalSetup: '<rootDir>/test/support/hardening.global-setup.ts',
      globalTeardown: '<rootDir>/test/support/hardening.global-teardown.ts',
    }),
    tier('deploy', ['**/*.deploy.spec.ts']),
    tier('bench-smoke', ['<rootDir>/test/bench/**/*.smoke.spec.ts'], {
      ...builds,
    }),
  ],
  // Log capture for the whole run (root level: once, whatever tiers are selected).
  globalSetup: '<rootDir>/test/observability/log-capture.global-setup.ts',
  globalTeardown: '<rootDir>/test/observability/log-capture.global-teardown.ts',
  // Jest's own output, then what was skipped for a missing system part and why.
  reporters: ['default', '<rootDir>/test/support/system-parts.reporter.cjs'],
  // Suites start servers and child processes; two workers match the two cores.
  maxWorkers: 2,
  // A global option: it has no effect inside a project.
  testTimeout: 30000,
};
