import { LRUCache } from 'lru-cache';
import { entryBytes, type CacheEntry } from './cache-entry.js';
import { pathOfKey, upstreamOfKey, type CacheKey } from './cache-key.js';
import type { MissRole, ResponseStore, StoreStats, WaitResult } from './response-store.js';

/**
 * A small body read in one chunk can be a view into a much larger socket buffer; keeping the view would keep
 * the whole buffer alive behind the byte accounting. Such bodies are copied once, on the miss path.
 */
function compact(entry: CacheEntry): CacheEntry {
  const backing = entry.body.buffer.byteLength;
  if (backing <= 16 * 1024 || backing <= 2 * entry.body.byteLength) return entry;
  return { ...entry, body: Buffer.from(entry.body) };
}

const NOTHING: Promise<undefined> = Promise.resolve(undefined);

/** Fixed cost per entry on top of the value: the key (UTF-16) and the LRU's own slot. */
const SLOT_OVERHEAD = 96;

export interface MemoryStoreOptions {
  readonly maxBytes: number;
  /** How often expired entries are swept (they are also dropped when read). */
  readonly sweepIntervalMs?: number;
  /** The clock retention is measured on: wall-clock ms, like the entries' storedAt and freshUntil. */
  readonly clock?: { now(): number };
}

/**
 * One process's cache: an LRU bounded by bytes, not by entry count (one 8 MB answer and 4,000 small ones
 * weigh what they weigh), each entry dropped once its retention has passed. Values stay objects (no
 * serialisation): a hit hands out the stored Buffer itself, no copy, no parse.
 *
 * Invalidation uses a generation per scope (`upstream:credential:family`) inside the key: a write bumps the
 * generation, O(1), and the old entries become unreachable and age out of the LRU first (nobody reads
 * them). A miss remembers the generation it started under and stores under it, so an answer that raced a
 * write lands under a dead generation and is never served. Purges by upstream or path prefix walk the keys
 * (an operator action, not a request path).
 */
export class MemoryResponseStore implements ResponseStore {
  readonly kind = 'memory' as const;
  private readonly lru: LRUCache<string, CacheEntry>;
  private readonly maxBytes: number;
  private readonly generations = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(opts: MemoryStoreOptions) {
    if (!(opts.maxBytes >= 0)) throw new Error('MemoryResponseStore: maxBytes must be ≥ 0');
    this.maxBytes = opts.maxBytes;
    this.lru = new LRUCache<string, CacheEntry>({
      // lru-cache needs a positive cap; a 0 cap refuses every entry in set() instead.
      maxSize: Math.max(1, opts.maxBytes),
      sizeCalculation: (entry, key) => entryBytes(entry) + key.length * 2 + SLOT_OVERHEAD,
      perf: opts.clock ?? Date,
      // Read the clock on every check: a cached reading would serve an entry past its retention.
      ttlResolution: 0,
    });
    this.sweeper = setInterval(() => this.lru.purgeStale(), opts.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  private generation(scope: string): number {
    return this.generations.get(scope) ?? 0;
  }

  private storeKey(key: CacheKey, generation: number): string {
    // `scope#gen:hash:path` keeps the path the 4th `:`-separated field, like the Redis keys.
    return `${key.scope}#${generation}:${key.hash}:${key.path}`;
  }

  get(key: CacheKey): Promise<CacheEntry | undefined> {
    const entry = this.getSync(key);
    return entry === undefined ? NOTHING : Promise.resolve(entry);
  }

  getSync(key: CacheKey): CacheEntry | undefined {
    return this.lru.get(this.storeKey(key, this.generation(key.scope)));
  }

  async set(
    key: CacheKey,
    entry: CacheEntry,
    retainMs: number,
    token: string | undefined,
    _indexed?: boolean,
  ): Promise<boolean> {
    if (token === undefined || Number(token) !== this.generation(key.scope)) return false;
    const k = this.storeKey(key, Number(token));
    if (entryBytes(entry) + k.length * 2 + SLOT_OVERHEAD > this.maxBytes) return false;
    this.lru.set(k, compact(entry), { ttl: retainMs });
    return true;
  }

  async beginMiss(key: CacheKey): Promise<MissRole> {
    return { role: 'local', token: String(this.generation(key.scope)) };
  }

  async waitFor(): Promise<WaitResult> {
    // Single process: in-process coalescing covers every waiter; there is no one else to wait for.
    return { kind: 'retry' };
  }

  async invalidate(scope: string): Promise<void> {
    this.generations.set(scope, this.generation(scope) + 1);
  }

  async purge(upstream: string, pathPrefix?: string): Promise<number> {
    let n = 0;
    for (const k of [...this.lru.keys()]) {
      if (upstreamOfKey(k) !== upstream) continue;
      if (pathPrefix !== undefined && !pathOfKey(k).startsWith(pathPrefix)) continue;
      if (this.lru.delete(k)) n++;
    }
    return n;
  }

  async stats(): Promise<StoreStats> {
    return {
      store: 'memory',
      available: true,
      entries: this.lru.size,
      bytes: this.lru.calculatedSize,
      maxBytes: this.maxBytes,
    };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.lru.clear();
  }
}
