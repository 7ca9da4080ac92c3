import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

// Self-contained: Jest loads global setup/teardown files without the module name mapping the suites use.
const CAPTURE_DIR_ENV = 'ATRIUM_LOG_CAPTURE_DIR';

export interface LeakReport {
  file: string;
  line: number;
  /** The secret, masked: first 4 characters and the length. */
  secret: string;
  how: 'journaled secret' | 'key-shaped string';
}

export interface ScanResult {
  files: number;
  lines: number;
  /** pino lines with `"msg":"request"`: proves the request log was captured. */
  requestLines: number;
  secrets: number;
  leaks: LeakReport[];
}

/** Key shapes the tests and the sandbox mint: consumer keys (`atr_test_…`, `atr_demo_…`), the sandbox's operator token (`atr_op_…`) and sandbox secrets. */
const KEY_SHAPES = [
  /atr_(?:test|demo|op)_[A-Za-z0-9_-]{8,}/g,
  /sbx_(?:macro|company|emis|dw|pw)_[A-Za-z0-9_-]{8,}/g,
];

/** The sandbox banner of `npm start` prints the demo key and operator token on purpose (README); only those lines are exempt. */
const BANNER_KEY = /^(?:Demo consumer key|Console operator token): (\S+)\s*$/;
const BANNER_CURL = /^ {2}curl /;

function mask(s: string): string {
  return `${s.slice(0, 4)}…(${s.length} chars)`;
}

/** Scans a capture directory (see log-capture.ts) for every journaled secret and every key-shaped string. */
export function scanCapture(dir: string): ScanResult {
  const names = readdirSync(dir).sort();
  const secrets = new Set<string>();
  for (const n of names.filter((n) => n.startsWith('secrets-')))
    for (const s of readFileSync(join(dir, n), 'utf8').split('\n')) if (s.length >= 6) secrets.add(s);
  const logs = names.filter((n) => n.endsWith('.log'));
  // Demo keys appear only in spawned gateways' banners: journal them from there.
  for (const n of logs.filter((n) => n.startsWith('spawned-')))
    for (const line of readFileSync(join(dir, n), 'utf8').split('\n')) {
      const m = BANNER_KEY.exec(line);
      if (m) secrets.add(m[1]);
    }
  const list = [...secrets].sort((a, b) => b.length - a.length);
  const result: ScanResult = {
    files: logs.length,
    lines: 0,
    requestLines: 0,
    secrets: secrets.size,
    leaks: [],
  };
  for (const n of logs) {
    const spawned = n.startsWith('spawned-');
    const lines = readFileSync(join(dir, n), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (line.length === 0) return;
      result.lines++;
      if (line.includes('"msg":"request"')) result.requestLines++;
      if (spawned && (BANNER_KEY.test(line) || BANNER_CURL.test(line))) return;
      for (const s of list)
        if (line.includes(s))
          result.leaks.push({ file: n, line: i + 1, secret: mask(s), how: 'journaled secret' });
      for (const re of KEY_SHAPES)
        for (const m of line.matchAll(re))
          if (!list.some((s) => m[0] === s || s.includes(m[0])))
            result.leaks.push({ file: n, line: i + 1, secret: mask(m[0]), how: 'key-shaped string' });
    });
  }
  return result;
}

export function describeScan(r: ScanResult): string {
  const head = `log capture: ${r.lines} lines (${r.requestLines} request lines) in ${r.files} files scanned for ${r.secrets} secrets`;
  if (r.leaks.length === 0) return `${head}: no key found`;
  return [
    `${head}: ${r.leaks.length} KEY LEAK(S)`,
    ...r.leaks.slice(0, 50).map((l) => `  ${l.file}:${l.line}: ${l.secret} (${l.how})`),
  ].join('\n');
}

/**
 * After the whole run: no captured log line may contain a key. A leak fails the run (Jest exits non-zero)
 * and leaves the capture in place for inspection. When CI named the directory, an empty capture fails too:
 * it would mean the capture itself broke.
 */
export default function globalTeardown(): void {
  const dir = process.env[CAPTURE_DIR_ENV];
  if (!dir) return;
  const owned = process.env.ATRIUM_LOG_CAPTURE_OWNED === '1';
  const result = scanCapture(dir);
  process.stdout.write(`\n${describeScan(result)}\n`);
  if (result.leaks.length > 0) throw new Error(`keys found in captured logs; see ${dir}`);
  if (!owned && (result.requestLines === 0 || result.secrets === 0))
    throw new Error(`log capture in ${dir} is empty: the capture is broken`);
  if (owned) rmSync(dir, { recursive: true, force: true });
}
