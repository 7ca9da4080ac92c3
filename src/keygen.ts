// A fresh consumer key and a complete consumers-file entry for it (limits, CORS list, weight…): the key is
// shown once; only its SHA-256 digest goes in the file (or use POST /admin/consumers with Redis).
// `npm run keygen` runs it (scripts/keygen.mjs); the interfaces it accepts are those of the index.
//
// Usage: npm run keygen -- <consumer-id> [options]
//   --upstreams macro,company   interfaces it may use (default: the first of the index)
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
import { perSecondAndMinute } from './core/auth/consumer.js';
import { UPSTREAM_NAMES } from './upstreams/index.js';

/** What the command prints and its exit status (2: a bad argument, nothing printed on stdout). */
export interface KeygenResult {
  readonly status: 0 | 2;
  readonly stdout: string;
  readonly stderr: string;
}

class Refused extends Error {}

function die(message: string): never {
  throw new Refused(message);
}

/** Runs the command on `args`, accepting the interfaces `upstreams` names (the index's by default). */
export function keygen(
  args: readonly string[],
  upstreams: readonly string[] = UPSTREAM_NAMES,
  now: () => number = Date.now,
): KeygenResult {
  try {
    return { status: 0, stdout: entryFor(args, upstreams, now), stderr: '' };
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    return { status: 2, stdout: '', stderr: `keygen: ${e.message}\n` };
  }
}

function entryFor(args: readonly string[], known: readonly string[], now: () => number): string {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        upstreams: { type: 'string', default: known[0] },
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
    die((e as Error).message);
  }
  const { values: o, positionals } = parsed;
  const id = positionals[0] ?? 'my-app';
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) die('the consumer id must be 1–64 characters of A-Z a-z 0-9 . _ -');

  const upstreams = o.upstreams
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (upstreams.length === 0 || upstreams.some((u) => !known.includes(u)))
    die(`--upstreams: a comma-separated list of ${known.join(', ')}`);

  const positive = (name: string, text: string): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n <= 0) die(`--${name} must be a positive whole number`);
    return n;
  };
  const limits = perSecondAndMinute(
    positive('per-second', o['per-second']),
    positive('per-minute', o['per-minute']),
  );

  const corsOrigins = o.cors
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const isOrigin = (origin: string): boolean => {
    try {
      const u = new URL(origin);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === origin.replace(/\/$/, '');
    } catch {
      return false;
    }
  };
  for (const origin of corsOrigins) {
    if (!isOrigin(origin))
      die(`--cors: "${origin}" is not an origin (scheme://host[:port], no path, no wildcard)`);
  }

  const weight = Number(o.weight);
  if (!(weight > 0)) die('--weight must be a positive number');
  const reservedShare = Number(o['reserved-share']);
  if (!(reservedShare >= 0 && reservedShare < 1)) die('--reserved-share must be a number in [0, 1)');

  let expiresAt: string | undefined;
  if (o['expires-at'] !== undefined) {
    const ms = /^\d{4}-\d\d-\d\dT/.test(o['expires-at']) ? Date.parse(o['expires-at']) : NaN;
    if (!Number.isFinite(ms) || ms <= now()) die('--expires-at must be a future ISO 8601 date-time');
    expiresAt = new Date(ms).toISOString();
  }

  const key = `atr_${randomBytes(32).toString('base64url')}`;
  const sha256 = createHash('sha256').update(key).digest('hex');
  const entry = {
    id,
    keys: [{ sha256, createdAt: new Date(now()).toISOString(), ...(expiresAt ? { expiresAt } : {}) }],
    upstreams,
    write: o.write,
    limits,
    weight,
    reservedShare,
    corsOrigins,
    enabled: true,
  };

  if (o.json) return JSON.stringify({ key, entry }) + '\n';
  return [
    `consumer id : ${id}`,
    `key         : ${key}`,
    `sha256      : ${sha256}`,
    '',
    'Give the key to the app team over a secure channel; add this entry to the consumers file',
    '(to rotate, add it to the existing entry\'s "keys" instead, then remove the old one):',
    JSON.stringify(entry, null, 2),
    '',
  ].join('\n');
}
