import { createCache, type Cache } from 'cache-manager';
import { Keyv } from 'keyv';
import { ByteLruStore } from './byte-lru.store.js';
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

export interface MemoryStoreOptions {
  readonly maxBytes: number;
  /** How often expired entries are swept (they are also dropped when read). */
  readonly sweepIntervalMs?: number;
}

/**
 * One process's cache: cache-manager over keyv over a byte-bounded LRU. Values stay objects (no
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
  private readonly lru: ByteLruStore;
  private readonly cache: Cache;
  private readonly generations = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(opts: MemoryStoreOptions) {
    this.lru = new ByteLruStore({
      maxBytes: opts.maxBytes,
      sizeOf: (data) => entryBytes((data as { value: CacheEntry }).value),
    });
    const keyv = new Keyv({
      store: this.lru,
      serialize: undefined,
      deserialize: undefined,
      useKeyPrefix: false,
    });
    this.cache = createCache({ stores: [keyv] });
    this.sweeper = setInterval(() => this.lru.sweepExpired(), opts.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  private generation(scope: string): number {
    return this.generations.get(scope) ?? 0;
  }

  private storeKey(key: CacheKey, generation: number): string {
    // `scope#gen:hash:path` keeps the path the 4th `:`-separated field, like the Redis keys.
    return `${key.scope}#${generation}:${key.hash}:${key.path}`;
  }

  /**
   * Reads the LRU directly, with keyv's expiry rule (`{ value, expires }`, expired when now > expires):
   * a hit costs one Map lookup and one settled promise instead of cache-manager's and keyv's async layers.
   */
  get(key: CacheKey): Promise<CacheEntry | undefined> {
    const entry = this.getSync(key);
    return entry === undefined ? NOTHING : Promise.resolve(entry);
  }

  getSync(key: CacheKey): CacheEntry | undefined {
    const k = this.storeKey(key, this.generation(key.scope));
    const data = this.lru.getSync(k) as { value: CacheEntry; expires?: number } | undefined;
    if (data === undefined) return undefined;
    if (typeof data.expires === 'number' && Date.now() > data.expires) {
      void this.lru.delete(k);
      return undefined;
    }
    return data.value;
  }

  async set(
    key: CacheKey,
    entry: CacheEntry,
    retainMs: number,
    token: string | undefined,
    _indexed?: boolean,
  ): Promise<boolean> {
    if (token === undefined || Number(token) !== this.generation(key.scope)) return false;
    if (!this.lru.fits(entryBytes(entry))) return false;
    await this.cache.set(this.storeKey(key, Number(token)), compact(entry), retainMs);
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
    for (const k of this.lru.keys()) {
      if (upstreamOfKey(k) !== upstream) continue;
      if (pathPrefix !== undefined && !pathOfKey(k).startsWith(pathPrefix)) continue;
      if (await this.lru.delete(k)) n++;
    }
    return n;
  }

  async stats(): Promise<StoreStats> {
    return {
      store: 'memory',
      available: true,
      entries: this.lru.size,
      bytes: this.lru.bytes,
      maxBytes: this.lru.maxBytes,
    };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.lru.clear();
  }
}
