import { EventEmitter } from 'node:events';
import type { KeyvStoreAdapter, StoredData } from 'keyv';

interface Slot {
  data: unknown;
  bytes: number;
  /** When the slot last moved to the back (ms): a hot key moves at most once a second, not on every read. */
  touchedAt: number;
}

/** How often a read may move a slot to the back: recency to the second is plenty for eviction order. */
const TOUCH_EVERY_MS = 1000;

export interface ByteLruOptions {
  /** Total bytes the store may hold (0 = store nothing). */
  readonly maxBytes: number;
  /** Bytes one stored value holds; keyv hands the store `{ value, expires }`. */
  readonly sizeOf: (data: unknown) => number;
}

/** Fixed cost per slot on top of the value: the key (UTF-16) and the Map and slot objects. */
const SLOT_OVERHEAD = 96;

/**
 * A keyv storage adapter that is an LRU bounded by bytes, not by entry count: one 8 MB answer and 4,000
 * small ones weigh what they weigh. A Map keeps recency (re-inserted on every read, so the first key is the
 * least recently used); eviction drops from the front until the total fits.
 */
export class ByteLruStore extends EventEmitter implements KeyvStoreAdapter {
  opts: Record<string, unknown> = { dialect: 'byte-lru' };
  namespace?: string;
  private readonly map = new Map<string, Slot>();
  private used = 0;
  /**
   * Eviction walks the Map with one iterator kept between calls: every key it has passed was evicted, so
   * its next key is always the least recently used. A fresh `keys().next()` per eviction would walk the
   * holes V8 leaves at the front of a Map after deletes (microseconds per eviction in a full cache).
   */
  private evictor: MapIterator<string> | undefined;

  constructor(private readonly options: ByteLruOptions) {
    super();
    if (!(options.maxBytes >= 0)) throw new Error('ByteLruStore: maxBytes must be ≥ 0');
  }

  get maxBytes(): number {
    return this.options.maxBytes;
  }

  /** Bytes currently held. */
  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.map.size;
  }

  /** Whether a value of this size could be stored at all. */
  fits(bytes: number): boolean {
    return bytes + SLOT_OVERHEAD <= this.options.maxBytes;
  }

  async get<Value>(key: string): Promise<StoredData<Value> | undefined> {
    return this.getSync(key) as StoredData<Value> | undefined;
  }

  getSync(key: string): unknown {
    const slot = this.map.get(key);
    if (slot === undefined) return undefined;
    // Move to the back: most recently used.
    const now = performance.now();
    if (now - slot.touchedAt >= TOUCH_EVERY_MS) {
      slot.touchedAt = now;
      this.map.delete(key);
      this.map.set(key, slot);
    }
    return slot.data;
  }

  async set(key: string, data: unknown): Promise<boolean> {
    const bytes = this.options.sizeOf(data) + key.length * 2 + SLOT_OVERHEAD;
    this.remove(key);
    if (bytes > this.options.maxBytes) return false;
    // Never touched: its first read moves it, as a strict LRU would.
    this.map.set(key, { data, bytes, touchedAt: -Infinity });
    this.used += bytes;
    while (this.used > this.options.maxBytes) {
      let oldest = this.evictor?.next();
      if (oldest === undefined || oldest.done) {
        // A finished iterator stays finished: start again from the front.
        this.evictor = this.map.keys();
        oldest = this.evictor.next();
      }
      if (oldest.done) break;
      this.remove(oldest.value);
    }
    return true;
  }

  async delete(key: string): Promise<boolean> {
    return this.remove(key);
  }

  async has(key: string): Promise<boolean> {
    return this.map.has(key);
  }

  async clear(): Promise<void> {
    this.map.clear();
    this.evictor = undefined;
    this.used = 0;
  }

  /** Keys from least to most recently used (a snapshot: safe to delete while iterating). */
  keys(): string[] {
    return [...this.map.keys()];
  }

  /** Drops values whose keyv expiry has passed (a periodic sweep; reads drop them lazily too). */
  sweepExpired(now = Date.now()): number {
    let n = 0;
    for (const [key, slot] of this.map) {
      const expires = (slot.data as { expires?: unknown } | null)?.expires;
      if (typeof expires === 'number' && expires <= now) {
        this.remove(key);
        n++;
      }
    }
    return n;
  }

  private remove(key: string): boolean {
    const slot = this.map.get(key);
    if (slot === undefined) return false;
    this.map.delete(key);
    this.used -= slot.bytes;
    return true;
  }
}
