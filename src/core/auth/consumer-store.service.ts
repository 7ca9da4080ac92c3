import { hash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Consumer, ConsumerLimit } from './consumer.js';

/** One-shot: no Hash object per call (several times cheaper than createHash on the request path). */
export function sha256(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

export class ConsumersFileError extends Error {}

type Raw = Record<string, unknown>;

function fail(where: string, what: string): never {
  throw new ConsumersFileError(`consumers file: ${where}: ${what}`);
}

function parseLimit(raw: unknown, where: string): ConsumerLimit {
  if (typeof raw !== 'object' || raw === null) fail(where, 'must be an object');
  const r = raw as Raw;
  if (typeof r.name !== 'string' || !r.name) fail(where, 'name must be a non-empty string');
  if (!Number.isInteger(r.ttlMs) || (r.ttlMs as number) <= 0) fail(where, 'ttlMs must be a positive integer');
  if (!Number.isInteger(r.limit) || (r.limit as number) <= 0) fail(where, 'limit must be a positive integer');
  return { name: r.name, ttlMs: r.ttlMs as number, limit: r.limit as number };
}

/** Validates one consumer entry; messages name the consumer and field, never a hash. */
export function parseConsumer(raw: unknown, index: number, knownUpstreams: readonly string[]): Consumer {
  if (typeof raw !== 'object' || raw === null) fail(`consumers[${index}]`, 'must be an object');
  const r = raw as Raw;
  if (typeof r.id !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(r.id))
    fail(`consumers[${index}].id`, 'must be 1–64 characters of A-Z a-z 0-9 . _ -');
  const where = `consumer "${r.id}"`;
  if (!Array.isArray(r.keyHashes) || r.keyHashes.length === 0)
    fail(where, 'keyHashes must be a non-empty array');
  const keyHashes = r.keyHashes.map((h, i) => {
    if (typeof h !== 'string' || !/^[0-9a-f]{64}$/i.test(h))
      fail(`${where}.keyHashes[${i}]`, 'must be a SHA-256 hex digest (npm run keygen)');
    return Buffer.from(h, 'hex');
  });
  if (!Array.isArray(r.upstreams) || r.upstreams.length === 0)
    fail(where, 'upstreams must be a non-empty array');
  for (const u of r.upstreams)
    if (typeof u !== 'string' || !knownUpstreams.includes(u))
      fail(`${where}.upstreams`, `unknown upstream (known: ${knownUpstreams.join(', ')})`);
  if (r.write !== undefined && typeof r.write !== 'boolean') fail(where, 'write must be a boolean');
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
  return {
    id: r.id,
    keyHashes,
    upstreams: new Set(r.upstreams as string[]),
    write: r.write === true,
    limits: limits.map((l, i) => parseLimit(l, `${where}.limits[${i}]`)),
    weight,
    reservedShare,
    corsOrigins: corsOrigins as string[],
  };
}

export function parseConsumersDocument(doc: unknown, knownUpstreams: readonly string[]): Consumer[] {
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as Raw).consumers))
    throw new ConsumersFileError('consumers file: must be {"consumers": [...]}');
  const list = ((doc as Raw).consumers as unknown[]).map((c, i) => parseConsumer(c, i, knownUpstreams));
  const ids = new Set<string>();
  const hashes = new Set<string>();
  for (const c of list) {
    if (ids.has(c.id)) throw new ConsumersFileError(`consumers file: duplicate consumer id "${c.id}"`);
    ids.add(c.id);
    for (const h of c.keyHashes) {
      const hex = h.toString('hex');
      if (hashes.has(hex))
        throw new ConsumersFileError(`consumers file: consumer "${c.id}" reuses another key`);
      hashes.add(hex);
    }
  }
  return list;
}

export function loadConsumersFile(path: string, knownUpstreams: readonly string[]): Consumer[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConsumersFileError(
      `consumers file: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ConsumersFileError(`consumers file: ${path} is not valid JSON`);
  }
  return parseConsumersDocument(doc, knownUpstreams);
}

/**
 * Finds the consumer of a presented key. Keys are high-entropy random strings stored only as SHA-256
 * digests; the lookup is by digest (so its timing says nothing about any stored key) and the match is
 * confirmed with a constant-time compare.
 */
export class ConsumerStore {
  private readonly byHash = new Map<string, { consumer: Consumer; digest: Buffer }>();
  private readonly byId = new Map<string, Consumer>();

  constructor(consumers: readonly Consumer[]) {
    for (const c of consumers) {
      this.byId.set(c.id, c);
      for (const h of c.keyHashes) this.byHash.set(h.toString('base64'), { consumer: c, digest: h });
    }
  }

  authenticate(key: string): Consumer | undefined {
    const digest = sha256(key);
    const hit = this.byHash.get(digest.toString('base64'));
    if (!hit || !timingSafeEqual(hit.digest, digest)) return undefined;
    return hit.consumer;
  }

  get(id: string): Consumer | undefined {
    return this.byId.get(id);
  }

  all(): Consumer[] {
    return [...this.byId.values()];
  }
}
