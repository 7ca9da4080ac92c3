import { readFileSync } from 'node:fs';
import { timingSafeEqual } from 'node:crypto';
import { SYSTEM_CLOCK, type Clock } from '../time/clock.js';
import type { Consumer } from './consumer.js';
import { ConsumersFileError, keysOf, parseConsumersDocument, sha256 } from './consumer-record.js';

// The file's parsing lives in consumer-record.ts; these names stay importable from here.
export {
  ConsumersFileError,
  keysOf,
  parseConsumer,
  parseConsumersDocument,
  sha256,
} from './consumer-record.js';

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

interface KeyEntry {
  readonly consumer: Consumer;
  readonly digest: Buffer;
  readonly expiresAt: number | undefined;
}

interface Index {
  readonly byHash: Map<string, KeyEntry>;
  readonly byId: Map<string, Consumer>;
  /** Consumers that accept end-user tokens, by the issuer they accept them from. */
  readonly byIssuer: Map<string, Consumer[]>;
}

interface Digest {
  readonly key: string;
  readonly digest: Buffer;
  /** The digest as the index keys it. */
  readonly id: string;
}

/** Equal strings, in time that depends on the length only (never on where they differ). */
function sameKey(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function indexOf(consumers: readonly Consumer[]): Index {
  const byHash = new Map<string, KeyEntry>();
  const byId = new Map<string, Consumer>();
  const byIssuer = new Map<string, Consumer[]>();
  for (const c of consumers) {
    byId.set(c.id, c);
    if (c.tokens) {
      const list = byIssuer.get(c.tokens.issuer);
      if (list) list.push(c);
      else byIssuer.set(c.tokens.issuer, [c]);
    }
    for (const k of keysOf(c))
      byHash.set(k.hash.toString('base64'), { consumer: c, digest: k.hash, expiresAt: k.expiresAt });
  }
  return { byHash, byId, byIssuer };
}

/**
 * The consumers in force, and the lookup of a presented key. Keys are high-entropy random strings stored
 * only as SHA-256 digests; the lookup is by digest (so its timing says nothing about any stored key) and the
 * match is confirmed with a constant-time compare. The set is replaced whole (file reload, admin API, Redis
 * pub/sub): a request sees either the old set or the new one, never a mix.
 */
export class ConsumerStore {
  private index: Index;
  /** The last key a connection presented, with its digest (weakly: gone with the socket). */
  private readonly digests = new WeakMap<object, Digest>();
  private readonly listeners = new Set<(consumers: readonly Consumer[]) => void>();

  constructor(
    consumers: readonly Consumer[],
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    this.index = indexOf(consumers);
  }

  /** Puts a new set in force (already validated) and tells the listeners (CORS policy, quota plans…). */
  replace(consumers: readonly Consumer[]): void {
    this.index = indexOf(consumers);
    const all = this.all();
    for (const l of this.listeners) l(all);
  }

  /** Called after every replace; returns the unsubscribe function. */
  onChange(listener: (consumers: readonly Consumer[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The consumer of a key that is known and not past its `expiresAt` (disabled consumers included).
   * `connection` (the request's socket): a keep-alive connection that presents the same key again reuses its
   * digest instead of hashing it per request; the lookup and checks below still run every time, so a reload
   * or an expiry applies at once. The key is compared in constant time (a proxy may carry several clients
   * over one connection), and is held only while the connection is open.
   */
  authenticate(key: string, connection?: object): Consumer | undefined {
    let d: Digest | undefined = connection ? this.digests.get(connection) : undefined;
    if (d === undefined || !sameKey(d.key, key)) {
      const digest = sha256(key);
      d = { key, digest, id: digest.toString('base64') };
      if (connection) this.digests.set(connection, d);
    }
    const digest = d.digest;
    const hit = this.index.byHash.get(d.id);
    if (!hit || !timingSafeEqual(hit.digest, digest)) return undefined;
    if (hit.expiresAt !== undefined && hit.expiresAt <= this.clock.now()) return undefined;
    return hit.consumer;
  }

  /** The consumers that accept end-user tokens from this issuer (exact `iss`); none → empty. */
  acceptingTokensFrom(issuer: string): readonly Consumer[] {
    return this.index.byIssuer.get(issuer) ?? [];
  }

  get(id: string): Consumer | undefined {
    return this.index.byId.get(id);
  }

  all(): Consumer[] {
    return [...this.index.byId.values()];
  }

  now(): number {
    return this.clock.now();
  }
}
