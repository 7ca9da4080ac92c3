import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Jest loads global hooks without the suites' module name mapping, so the shared build hook is required by
// path (extensionless: Jest's transform hook compiles the TypeScript while this file loads).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const build = require('./build.global-setup') as {
  default: (global: { selectProjects?: string[] }) => void;
};

const RESULTS_DIR_ENV = 'ATRIUM_HARDENING_RESULTS_DIR';

/**
 * Global setup of the hardening tier: the shared one-time build of dist/ (the fleet suite spawns
 * `node dist/main.js`), and a directory where each suite leaves its figures for the summary table that
 * global-teardown.ts prints. The run's log capture is set up at the root of the Jest config.
 */
export default function globalSetup(global: { selectProjects?: string[] }): void {
  build.default(global);
  process.env[RESULTS_DIR_ENV] = mkdtempSync(join(tmpdir(), 'atrium-hardening-'));
}
