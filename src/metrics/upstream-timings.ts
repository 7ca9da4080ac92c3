import { Injectable } from '@nestjs/common';

/** Hard cap: more entries than this means answers never came back for them; the oldest go first. */
const MAX_ENTRIES = 20_000;
/** Entries no response claimed within this time (background cache refreshes, aborted requests) are dropped. */
const ORPHAN_AFTER_MS = 60_000;
const SWEEP_EVERY_MS = 10_000;

/**
 * Upstream time per request, from the pipeline (which sees request ids, not Fastify requests) to the
 * response hook that writes the log line and the gateway-time histogram. An entry lives from the upstream
 * call to the end of its response. Calls made after the answer was sent (a background refresh of a stale
 * cache entry) leave an entry nobody takes: swept after a minute. Two in-flight requests that share a
 * client-sent request id share an entry (the sum is reported on whichever finishes first).
 */
@Injectable()
export class UpstreamTimings {
  private readonly entries = new Map<string, { ms: number; at: number }>();
  private lastSweep = Date.now();

  add(requestId: string, ms: number): void {
    const now = Date.now();
    const prev = this.entries.get(requestId);
    if (prev) prev.ms += ms;
    else this.entries.set(requestId, { ms, at: now });
    if (now - this.lastSweep > SWEEP_EVERY_MS) this.sweep(now);
    if (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  take(requestId: string): number | undefined {
    const e = this.entries.get(requestId);
    if (e === undefined) return undefined;
    this.entries.delete(requestId);
    return e.ms;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Insertion order is age order: stop at the first young entry. */
  sweep(now = Date.now()): void {
    this.lastSweep = now;
    for (const [id, e] of this.entries) {
      if (now - e.at < ORPHAN_AFTER_MS) break;
      this.entries.delete(id);
    }
  }
}
