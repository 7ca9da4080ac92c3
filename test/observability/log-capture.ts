import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { DestinationStream } from 'pino';
import { secretForms } from '../../src/core/logging/secret-forms.js';

/**
 * Log capture over a whole Jest run (see log-capture.global-setup.ts): every gateway's log output, in-process
 * or spawned, is appended to files in ATRIUM_LOG_CAPTURE_DIR, and every secret a test hands a gateway or a
 * client (consumer keys, upstream tokens and passwords) is journaled beside them. After the run, the files
 * are scanned for the journaled secrets and for key-shaped strings (log-scan.ts).
 */
export const CAPTURE_DIR_ENV = 'ATRIUM_LOG_CAPTURE_DIR';

export function captureDir(): string | undefined {
  return process.env[CAPTURE_DIR_ENV] || undefined;
}

function file(name: string): string | undefined {
  const dir = captureDir();
  if (!dir) return undefined;
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}

const worker = process.env.JEST_WORKER_ID ?? '0';

/**
 * Journals a secret the tests use, so the post-run scan looks for it: literally and in every encoded form a
 * vendor might echo it in (URL-encoded, JSON-escaped, base64; see src/core/logging/secret-forms.ts).
 */
export function recordSecret(secret: string | undefined): void {
  if (!secret || secret.length < 6 || /[\r\n]/.test(secret)) return;
  const f = file(`secrets-w${worker}-${process.pid}.txt`);
  if (f)
    appendFileSync(f, [secret, ...secretForms(secret)].filter((s) => !/[\r\n]/.test(s)).join('\n') + '\n');
}

const SECRET_ENV = /(TOKEN|PASSWORD|SECRET|_KEY)$/;

/** Journals the secret-looking values of a gateway environment (`UPSTREAM_*_TOKEN`, `ATRIUM_DEMO_KEY`, …). */
export function recordEnvSecrets(env: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(env)) if (SECRET_ENV.test(k)) recordSecret(v);
}

/** The file in-process gateways of this worker log to (undefined when capture is off). */
export function inProcessCaptureFile(): string | undefined {
  return file(`inproc-w${worker}-${process.pid}.log`);
}

/**
 * Where in-process gateways log during tests: the worker's capture file, written synchronously (nothing is
 * lost when a test file ends), or nowhere when capture is off (keeps Jest's output clean).
 */
export function captureDestination(): DestinationStream {
  const f = inProcessCaptureFile();
  return { write: f ? (line: string) => appendFileSync(f, line) : () => undefined };
}

let spawned = 0;

/** Appends a spawned gateway's stdout and stderr to its own capture file. */
export function teeSpawnedOutput(name: string, ...streams: Readable[]): void {
  const f = file(`spawned-w${worker}-${process.pid}-${++spawned}-${name}.log`);
  if (!f) return;
  for (const s of streams) s.on('data', (d: Buffer) => appendFileSync(f, d));
}
