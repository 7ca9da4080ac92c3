import type { Clock, ClockTimer } from '../../src/core/time/clock.js';

/**
 * A clock that moves only when told: `advance(ms)` runs, in time order, every timer that falls due, and lets
 * the promises those timers started settle before running the next one.
 */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(timer: ClockTimer): void {
    this.timers.delete(timer as number);
  }

  /** Timers not yet run. */
  get pending(): number {
    return this.timers.size;
  }

  async advance(ms: number): Promise<void> {
    const until = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers)
        if (entry[1].at <= until && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
      await flush();
    }
    this.t = until;
    await flush();
  }
}

/** Lets already-settled promise chains run (a few turns of the microtask and macrotask queues). */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}
