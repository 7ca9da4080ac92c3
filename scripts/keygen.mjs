#!/usr/bin/env node
// Prints a fresh consumer key and a complete consumers-file entry for it (limits, CORS list, weight…): the
// key is shown once; only its SHA-256 digest goes in the file (or use POST /admin/consumers with Redis).
//
// Usage: npm run keygen -- <consumer-id> [options]
//   --upstreams macro,company   interfaces it may use (default: macro)
//   --write                     may use POST/PUT/PATCH/DELETE (default: read only)
//   --per-second N              quota window of 1 s (default 10)
//   --per-minute N              quota window of 60 s (default 300)
//   --cors https://a.example,…  browser origins allowed to call with the key (default: none, i.e. [])
//   --weight N                  share of a scarce upstream budget (default 1)
//   --reserved-share F          fraction of each budget kept for it, 0 ≤ F < 1 (default 0)
//   --expires-at ISO-DATE       the key stops working then (a rotation's overlap end)
//   --json                      print {"key": …, "entry": …} only (for scripts)
import { createHash, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';

const UPSTREAMS = ['macro', 'company', 'documents', 'deals'];

function die(message) {
  process.stderr.write(`keygen: ${message}\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      upstreams: { type: 'string', default: 'macro' },
      write: { type: 'boolean', default: false },
      'per-second': { type: 'string', default: '10' },
      'per-minute': { type: 'string', default: '300' },
      cors: { type: 'string', default: '' },
      weight: { type: 'string', default: '1' },
      'reserved-share': { type: 'string', default: '0' },
      'expires-at': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
} catch (e) {
  die(e.message);
}
const { values: o, positionals } = parsed;
const id = positionals[0] ?? 'my-app';
if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) die('the consumer id must be 1–64 characters of A-Z a-z 0-9 . _ -');

const upstreams = o.upstreams
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
if (upstreams.length === 0 || upstreams.some((u) => !UPSTREAMS.includes(u)))
  die(`--upstreams: a comma-separated list of ${UPSTREAMS.join(', ')}`);

const positive = (name, text) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) die(`--${name} must be a positive whole number`);
  return n;
};
const limits = [
  { name: 'per-second', ttlMs: 1000, limit: positive('per-second', o['per-second']) },
  { name: 'per-minute', ttlMs: 60_000, limit: positive('per-minute', o['per-minute']) },
];

const corsOrigins = o.cors
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const origin of corsOrigins) {
  let ok = false;
  try {
    const u = new URL(origin);
    ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === origin.replace(/\/$/, '');
  } catch {
    ok = false;
  }
  if (!ok) die(`--cors: "${origin}" is not an origin (scheme://host[:port], no path, no wildcard)`);
}

const weight = Number(o.weight);
if (!(weight > 0)) die('--weight must be a positive number');
const reservedShare = Number(o['reserved-share']);
if (!(reservedShare >= 0 && reservedShare < 1)) die('--reserved-share must be a number in [0, 1)');

let expiresAt;
if (o['expires-at'] !== undefined) {
  const ms = /^\d{4}-\d\d-\d\dT/.test(o['expires-at']) ? Date.parse(o['expires-at']) : NaN;
  if (!Number.isFinite(ms) || ms <= Date.now()) die('--expires-at must be a future ISO 8601 date-time');
  expiresAt = new Date(ms).toISOString();
}

const key = `atr_${randomBytes(32).toString('base64url')}`;
const sha256 = createHash('sha256').update(key).digest('hex');
const entry = {
  id,
  keys: [{ sha256, createdAt: new Date().toISOString(), ...(expiresAt ? { expiresAt } : {}) }],
  upstreams,
  write: o.write,
  limits,
  weight,
  reservedShare,
  corsOrigins,
  enabled: true,
};

if (o.json) {
  process.stdout.write(JSON.stringify({ key, entry }) + '\n');
} else {
  process.stdout.write(
    [
      `consumer id : ${id}`,
      `key         : ${key}`,
      `sha256      : ${sha256}`,
      '',
      'Give the key to the app team over a secure channel; add this entry to the consumers file',
      '(to rotate, add it to the existing entry\'s "keys" instead, then remove the old one):',
      JSON.stringify(entry, null, 2),
      '',
    ].join('\n'),
  );
}
