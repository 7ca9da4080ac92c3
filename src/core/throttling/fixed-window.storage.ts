import type { OnApplicationShutdown } from '@nestjs/common';
import {
  recordOf,
  type MultiWindowThrottlerStorage,
  type QuotaVerdict,
  type QuotaWindow,
  type QuotaWindowState,
  type ThrottlerStorageRecord,
} from './quota-storage.js';

interface Slot {
  hits: number;
  resetAt: number;
}

/**
 * In-memory fixed windows: one small object per (consumer, window), O(1) per request however hot the
 * consumer (the stock storage keeps a timestamp per hit and filters the array on every request; see
 * shared/design/dependencies.md §6.11). A window starts at its key's first hit and lasts `ttlMs`.
 */
export class FixedWindowThrottlerStorage implements MultiWindowThrottlerStorage, OnApplicationShutdown {
  private readonly slots = new Map<string, Slot>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly now: () => number = () => Date.now(),
    sweepEveryMs = 60_000,
  ) {
    // Idle consumers' windows are dropped in the background, never on the request path.
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs);
    this.sweeper.unref();
  }

  hitAll(keys: readonly string[], windows: readonly QuotaWindow[]): QuotaVerdict {
    const now = this.now();
    const n = windows.length;
    const slots: Slot[] = new Array<Slot>(n);
    let allowed = true;
    for (let i = 0; i < n; i++) {
      let s = this.slots.get(keys[i]);
      if (s === undefined || s.resetAt <= now) {
        s = { hits: 0, resetAt: now + windows[i].ttlMs };
        this.slots.set(keys[i], s);
      }
      if (s.hits >= windows[i].limit) allowed = false;
      slots[i] = s;
    }
    const states: QuotaWindowState[] = new Array<QuotaWindowState>(n);
    for (let i = 0; i < n; i++) {
      const s = slots[i];
      if (allowed) s.hits++;
      states[i] = { hits: s.hits, resetMs: s.resetAt - now };
    }
    return { allowed, windows: states };
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    return recordOf(
      this.hitAll([`${key}\u0000${throttlerName}`], [{ name: throttlerName, ttlMs: ttl, limit }]),
    );
  }

  /** Number of live windows (tests, diagnostics). */
  get size(): number {
    return this.slots.size;
  }

  sweep(now = this.now()): void {
    for (const [key, s] of this.slots) if (s.resetAt <= now) this.slots.delete(key);
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }
}
