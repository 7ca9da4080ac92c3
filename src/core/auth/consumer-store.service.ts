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
}

function indexOf(consumers: readonly Consumer[]): Index {
  const byHash = new Map<string, KeyEntry>();
  const byId = new Map<string, Consumer>();
  for (const c of consumers) {
    byId.set(c.id, c);
    for (const k of keysOf(c))
      byHash.set(k.hash.toString('base64'), { consumer: c, digest: k.hash, expiresAt: k.expiresAt });
  }
  return { byHash, byId };
}

/**
 * The consumers in force, and the lookup of a presented key. Keys are high-entropy random strings stored
 * only as SHA-256 digests; the lookup is by digest (so its timing says nothing about any stored key) and the
 * match is confirmed with a constant-time compare. The set is replaced whole (file reload, admin API, Redis
 * pub/sub): a request sees either the old set or the new one, never a mix.
 */
export class ConsumerStore {
  private index: Index;
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

  /** The consumer of a key that is known and not past its `expiresAt` (disabled consumers included). */
  authenticate(key: string): Consumer | undefined {
    const digest = sha256(key);
    const hit = this.index.byHash.get(digest.toString('base64'));
    if (!hit || !timingSafeEqual(hit.digest, digest)) return undefined;
    if (hit.expiresAt !== undefined && hit.expiresAt <= this.clock.now()) return undefined;
    return hit.consumer;
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
