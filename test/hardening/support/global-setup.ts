import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// Jest loads global hooks without the suites' module name mapping, so the run's log capture hook is
// required by path (extensionless: Jest's transform hook compiles the TypeScript while this file loads).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const logCapture = require('../../observability/log-capture.global-setup') as { default: () => void };

const ROOT = resolve(__dirname, '../../..');
const RESULTS_DIR_ENV = 'ATRIUM_HARDENING_RESULTS_DIR';

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * The hardening tier's global setup: the run's log capture (every tier scans its logs), a directory where
 * each suite leaves its figures for the summary table, and one build of dist/ for the suites that spawn
 * `node dist/main.js` (built here once rather than raced by workers).
 */
export default function globalSetup(): void {
  logCapture.default();
  process.env[RESULTS_DIR_ENV] = mkdtempSync(join(tmpdir(), 'atrium-hardening-'));
  process.env.ATRIUM_HARDENING_STARTED = String(Date.now());
  let built: number;
  try {
    built = statSync(join(ROOT, 'dist/main.js')).mtimeMs;
  } catch {
    built = 0;
  }
  if (built < newest(join(ROOT, 'src')))
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: ROOT,
        stdio: 'inherit',
      },
    );
}
