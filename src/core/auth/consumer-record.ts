import { createHash, hash } from 'node:crypto';
import {
  TOKEN_ALGORITHMS,
  type Consumer,
  type ConsumerKey,
  type ConsumerLimit,
  type ConsumerTokens,
  type TokenAlgorithm,
} from './consumer.js';

/** One-shot: no Hash object per call (several times cheaper than createHash on the request path). */
export function sha256(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

/** A key's public id: derived from its digest (so a file reload keeps it), revealing nothing about the key. */
export function keyIdOf(digest: Buffer): string {
  return 'k-' + createHash('sha256').update(digest).digest('hex').slice(0, 10);
}

export class ConsumersFileError extends Error {}

/**
 * One consumer as JSON: an entry of the consumers file, a value in the Redis store, what the admin API
 * validates. `keyHashes` (digests only) and `keys` (digests with id and expiry) may both be given.
 */
export interface ConsumerRecord {
  id: string;
  keyHashes?: string[];
  keys?: Array<{ id?: string; sha256: string; expiresAt?: string; createdAt?: string }>;
  upstreams: string[];
  write?: boolean;
  limits?: ConsumerLimit[];
  weight?: number;
  reservedShare?: number;
  corsOrigins?: string[];
  enabled?: boolean;
  oidc?: TokensRecord;
}

/** The `oidc` block: end-user tokens from an OpenID Connect provider (docs/frontend.md). */
export interface TokensRecord {
  issuer: string;
  jwksUri?: string;
  audience: string | string[];
  algorithms?: string[];
  clockSkewSeconds?: number;
  jwksCooldownMs?: number;
  userLimits?: ConsumerLimit[];
}

type Raw = Record<string, unknown>;

function fail(where: string, what: string): never {
  throw new ConsumersFileError(`consumers file: ${where}: ${what}`);
}

const HEX64 = /^[0-9a-f]{64}$/i;

/** The rule CorsPolicy applies when it builds its sets: checked here so a bad origin is refused up front. */
function isHttpOrigin(o: string): boolean {
  try {
    const u = new URL(o);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** https, or http to a loopback host only (a development or test identity provider). */
export function isProviderUrl(v: string): boolean {
  try {
    const u = new URL(v);
    if (u.protocol === 'https:') return true;
    return u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  } catch {
    return false;
  }
}

const DEFAULT_CLOCK_SKEW_SECONDS = 30;
const MAX_CLOCK_SKEW_SECONDS = 300;
/** jose's own default: an unknown `kid` refetches the JWKS at most this often. */
const DEFAULT_JWKS_COOLDOWN_MS = 30_000;

function parseTokens(raw: unknown, where: string): ConsumerTokens {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(where, 'must be an object');
  const r = raw as Raw;
  for (const k of Object.keys(r))
    if (
      ![
        'issuer',
        'jwksUri',
        'audience',
        'algorithms',
        'clockSkewSeconds',
        'jwksCooldownMs',
        'userLimits',
      ].includes(k)
    )
      fail(where, `unknown field "${k.slice(0, 40)}"`);
  if (typeof r.issuer !== 'string' || !isProviderUrl(r.issuer))
    fail(`${where}.issuer`, 'must be an https URL (http only to localhost/127.0.0.1)');
  if (r.jwksUri !== undefined && (typeof r.jwksUri !== 'string' || !isProviderUrl(r.jwksUri)))
    fail(`${where}.jwksUri`, 'must be an https URL (http only to localhost/127.0.0.1)');
  const audience = typeof r.audience === 'string' ? [r.audience] : r.audience;
  if (
    !Array.isArray(audience) ||
    audience.length === 0 ||
    audience.some((a) => typeof a !== 'string' || a.length === 0 || a.length > 256)
  )
    fail(`${where}.audience`, 'must be a non-empty string or array of strings (the client id)');
  const algorithms = r.algorithms ?? [...TOKEN_ALGORITHMS];
  if (!Array.isArray(algorithms) || algorithms.length === 0)
    fail(`${where}.algorithms`, 'must be a non-empty array');
  for (const a of algorithms)
    if (typeof a !== 'string' || !(TOKEN_ALGORITHMS as readonly string[]).includes(a))
      fail(
        `${where}.algorithms`,
        `"${String(a).slice(0, 20)}" is not allowed (asymmetric only: ${TOKEN_ALGORITHMS.join(', ')}; never none or HS*)`,
      );
  const skew = r.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  if (!Number.isInteger(skew) || (skew as number) < 0 || (skew as number) > MAX_CLOCK_SKEW_SECONDS)
    fail(`${where}.clockSkewSeconds`, `must be an integer from 0 to ${MAX_CLOCK_SKEW_SECONDS}`);
  const cooldown = r.jwksCooldownMs ?? DEFAULT_JWKS_COOLDOWN_MS;
  if (!Number.isInteger(cooldown) || (cooldown as number) < 0)
    fail(`${where}.jwksCooldownMs`, 'must be a non-negative integer');
  const userLimits =
    r.userLimits === undefined
      ? []
      : Array.isArray(r.userLimits)
        ? r.userLimits.map((l, i) => parseLimit(l, `${where}.userLimits[${i}]`))
        : fail(where, 'userLimits must be an array');
  if (new Set(userLimits.map((l) => l.name)).size !== userLimits.length)
    fail(`${where}.userLimits`, 'window names must be unique');
  return {
    issuer: r.issuer,
    ...(r.jwksUri !== undefined ? { jwksUri: r.jwksUri } : {}),
    audience: audience as string[],
    algorithms: [...new Set(algorithms as TokenAlgorithm[])],
    clockSkewSeconds: skew as number,
    jwksCooldownMs: cooldown as number,
    userLimits,
  };
}

function parseLimit(raw: unknown, where: string): ConsumerLimit {
  if (typeof raw !== 'object' || raw === null) fail(where, 'must be an object');
  const r = raw as Raw;
  if (typeof r.name !== 'string' || !r.name) fail(where, 'name must be a non-empty string');
  if (!Number.isInteger(r.ttlMs) || (r.ttlMs as number) <= 0) fail(where, 'ttlMs must be a positive integer');
  if (!Number.isInteger(r.limit) || (r.limit as number) <= 0) fail(where, 'limit must be a positive integer');
  return { name: r.name, ttlMs: r.ttlMs as number, limit: r.limit as number };
}

function parseTime(v: unknown, where: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  const ms = typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms)) fail(where, 'must be an ISO 8601 date-time, e.g. 2030-01-31T12:00:00Z');
  return ms;
}

function parseKeys(r: Raw, where: string, keyless: boolean): ConsumerKey[] {
  const keys: ConsumerKey[] = [];
  if (r.keyHashes !== undefined) {
    if (!Array.isArray(r.keyHashes)) fail(where, 'keyHashes must be an array');
    r.keyHashes.forEach((h, i) => {
      if (typeof h !== 'string' || !HEX64.test(h))
        fail(`${where}.keyHashes[${i}]`, 'must be a SHA-256 hex digest (npm run keygen)');
      const hash = Buffer.from(h, 'hex');
      keys.push({ id: keyIdOf(hash), hash });
    });
  }
  if (r.keys !== undefined) {
    if (!Array.isArray(r.keys)) fail(where, 'keys must be an array');
    r.keys.forEach((k, i) => {
      const at = `${where}.keys[${i}]`;
      if (typeof k !== 'object' || k === null) fail(at, 'must be an object');
      const e = k as Raw;
      if (typeof e.sha256 !== 'string' || !HEX64.test(e.sha256))
        fail(`${at}.sha256`, 'must be a SHA-256 hex digest (npm run keygen)');
      if (e.id !== undefined && (typeof e.id !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(e.id)))
        fail(`${at}.id`, 'must be 1–64 characters of A-Z a-z 0-9 . _ -');
      const hash = Buffer.from(e.sha256, 'hex');
      const expiresAt = parseTime(e.expiresAt, `${at}.expiresAt`);
      const createdAt = parseTime(e.createdAt, `${at}.createdAt`);
      keys.push({
        id: e.id ?? keyIdOf(hash),
        hash,
        ...(expiresAt !== undefined ? { expiresAt } : {}),
        ...(createdAt !== undefined ? { createdAt } : {}),
      });
    });
  }
  if (keys.length === 0 && !keyless)
    fail(where, 'needs at least one key (keyHashes or keys) or an oidc block');
  const ids = new Set<string>();
  for (const k of keys) {
    if (ids.has(k.id)) fail(where, `key id "${k.id}" is used twice`);
    ids.add(k.id);
  }
  return keys;
}

/** Validates one consumer entry; messages name the consumer and field, never a hash. */
export function parseConsumer(raw: unknown, index: number, knownUpstreams: readonly string[]): Consumer {
  if (typeof raw !== 'object' || raw === null) fail(`consumers[${index}]`, 'must be an object');
  const r = raw as Raw;
  if (typeof r.id !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(r.id))
    fail(`consumers[${index}].id`, 'must be 1–64 characters of A-Z a-z 0-9 . _ -');
  const where = `consumer "${r.id}"`;
  // `null` removes the block (an admin PATCH).
  const tokens = r.oidc === undefined || r.oidc === null ? undefined : parseTokens(r.oidc, `${where}.oidc`);
  const keys = parseKeys(r, where, tokens !== undefined);
  if (!Array.isArray(r.upstreams) || r.upstreams.length === 0)
    fail(where, 'upstreams must be a non-empty array');
  for (const u of r.upstreams)
    if (typeof u !== 'string' || !knownUpstreams.includes(u))
      fail(`${where}.upstreams`, `unknown upstream (known: ${knownUpstreams.join(', ')})`);
  if (r.write !== undefined && typeof r.write !== 'boolean') fail(where, 'write must be a boolean');
  if (r.enabled !== undefined && typeof r.enabled !== 'boolean') fail(where, 'enabled must be a boolean');
  const limits =
    r.limits === undefined ? [] : Array.isArray(r.limits) ? r.limits : fail(where, 'limits must be an array');
  const weight = r.weight ?? 1;
  if (typeof weight !== 'number' || !(weight > 0)) fail(where, 'weight must be a positive number');
  const reservedShare = r.reservedShare ?? 0;
  if (typeof reservedShare !== 'number' || reservedShare < 0 || reservedShare >= 1)
    fail(where, 'reservedShare must be a number in [0, 1)');
  const corsOrigins = r.corsOrigins ?? [];
  if (!Array.isArray(corsOrigins) || corsOrigins.some((o) => typeof o !== 'string' || o === '*'))
    fail(where, 'corsOrigins must be an array of origins (no wildcard)');
  for (const o of corsOrigins as string[])
    if (!isHttpOrigin(o))
      fail(`${where}.corsOrigins`, `"${o}" is not an http(s) origin (scheme://host[:port])`);
  const parsedLimits = limits.map((l, i) => parseLimit(l, `${where}.limits[${i}]`));
  if (new Set(parsedLimits.map((l) => l.name)).size !== parsedLimits.length)
    fail(`${where}.limits`, 'window names must be unique');
  return {
    id: r.id,
    keyHashes: keys.map((k) => k.hash),
    keys,
    ...(r.enabled === false ? { enabled: false } : {}),
    upstreams: new Set(r.upstreams as string[]),
    write: r.write === true,
    limits: parsedLimits,
    weight,
    reservedShare,
    corsOrigins: corsOrigins as string[],
    ...(tokens ? { tokens } : {}),
  };
}

/** The keys of a consumer with ids (derived for consumers built with `keyHashes` only). */
export function keysOf(c: Consumer): readonly ConsumerKey[] {
  return c.keys ?? c.keyHashes.map((hash) => ({ id: keyIdOf(hash), hash }));
}

/**
 * Whole-set rules: unique ids, no key shared by two consumers (or twice by one), and no (issuer, audience)
 * accepted by two consumers: a token must name exactly one consumer.
 */
export function checkConsumerSet(list: readonly Consumer[]): void {
  const ids = new Set<string>();
  const hashes = new Set<string>();
  const audiences = new Map<string, string>();
  for (const c of list) {
    if (ids.has(c.id)) throw new ConsumersFileError(`consumers file: duplicate consumer id "${c.id}"`);
    ids.add(c.id);
    for (const aud of c.tokens?.audience ?? []) {
      const at = JSON.stringify([c.tokens!.issuer, aud]);
      const other = audiences.get(at);
      if (other !== undefined && other !== c.id)
        throw new ConsumersFileError(
          `consumers file: consumer "${c.id}" accepts tokens for audience "${aud}" of ${c.tokens!.issuer}, as "${other}" does`,
        );
      audiences.set(at, c.id);
    }
    for (const k of keysOf(c)) {
      const hex = k.hash.toString('hex');
      if (hashes.has(hex))
        throw new ConsumersFileError(`consumers file: consumer "${c.id}" reuses another key`);
      hashes.add(hex);
    }
  }
}

export function parseConsumersDocument(doc: unknown, knownUpstreams: readonly string[]): Consumer[] {
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as Raw).consumers))
    throw new ConsumersFileError('consumers file: must be {"consumers": [...]}');
  const list = ((doc as Raw).consumers as unknown[]).map((c, i) => parseConsumer(c, i, knownUpstreams));
  checkConsumerSet(list);
  return list;
}

const iso = (ms: number | undefined): string | undefined =>
  ms === undefined ? undefined : new Date(ms).toISOString();

/** The JSON form of a consumer (digests only): what the Redis store holds; parseConsumer reads it back. */
export function toRecord(c: Consumer): ConsumerRecord {
  return {
    id: c.id,
    keys: keysOf(c).map((k) => ({
      id: k.id,
      sha256: k.hash.toString('hex'),
      ...(k.expiresAt !== undefined ? { expiresAt: iso(k.expiresAt) } : {}),
      ...(k.createdAt !== undefined ? { createdAt: iso(k.createdAt) } : {}),
    })),
    upstreams: [...c.upstreams],
    write: c.write,
    limits: c.limits.map((l) => ({ name: l.name, ttlMs: l.ttlMs, limit: l.limit })),
    weight: c.weight,
    reservedShare: c.reservedShare,
    corsOrigins: [...c.corsOrigins],
    enabled: c.enabled !== false,
    ...(c.tokens ? { oidc: tokensRecord(c.tokens) } : {}),
  };
}

function tokensRecord(t: ConsumerTokens): TokensRecord {
  return {
    issuer: t.issuer,
    ...(t.jwksUri !== undefined ? { jwksUri: t.jwksUri } : {}),
    audience: [...t.audience],
    algorithms: [...t.algorithms],
    clockSkewSeconds: t.clockSkewSeconds,
    jwksCooldownMs: t.jwksCooldownMs,
    ...(t.userLimits.length > 0
      ? { userLimits: t.userLimits.map((l) => ({ name: l.name, ttlMs: l.ttlMs, limit: l.limit })) }
      : {}),
  };
}
