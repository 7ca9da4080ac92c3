import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Self-contained: Jest loads global setup files without the module name mapping the suites use.
const CAPTURE_DIR_ENV = 'ATRIUM_LOG_CAPTURE_DIR';

/**
 * Every Jest run captures all gateway logs (in-process and spawned) into one directory, scanned for keys by
 * the global teardown. CI names the directory (and then requires a non-empty capture); otherwise a temporary
 * one is used and removed when clean.
 */
export default function globalSetup(): void {
  const given = process.env[CAPTURE_DIR_ENV];
  if (given) {
    mkdirSync(given, { recursive: true });
    return;
  }
  process.env[CAPTURE_DIR_ENV] = mkdtempSync(join(tmpdir(), 'atrium-log-capture-'));
  process.env.ATRIUM_LOG_CAPTURE_OWNED = '1';
}
