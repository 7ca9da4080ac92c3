import type { Clock, ClockTimer } from '../core/time/clock.js';

/**
 * Keeps idle streams alive for the proxies between them and their clients. The interval is cut into slices,
 * each stream belongs to one, and each slice is written on its own turn: a replica with 10,000 streams
 * writes a few dozen at a time, not all of them in one turn of the event loop that every other request
 * waits for. A new stream joins the next slice in turn, so the slices stay even. Hand-written: the watch
 * service writes its streams itself, and no library the gateway keeps writes Server-Sent Events.
 */
export class Heartbeats<S> {
  private readonly slices: Set<S>[];
  private readonly sliceOf = new Map<S, number>();
  private next = 0;
  private turn = 0;
  private timer?: ClockTimer;
  private started = false;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    /** Writes one heartbeat to a stream (or skips it: a stream with bytes pending needs none). */
    private readonly beat: (stream: S) => void,
    // A slice every 50 ms at the default 15 s (10,000 streams: about 33 writes a turn), never under 10 ms.
    slices = Math.max(1, Math.min(300, Math.floor(intervalMs / 10))),
  ) {
    this.slices = Array.from({ length: slices }, () => new Set<S>());
  }

  add(stream: S): void {
    const i = this.next++ % this.slices.length;
    this.slices[i].add(stream);
    this.sliceOf.set(stream, i);
    if (this.started) this.arm();
  }

  delete(stream: S): void {
    const i = this.sliceOf.get(stream);
    if (i === undefined) return;
    this.sliceOf.delete(stream);
    this.slices[i].delete(stream);
  }

  start(): void {
    this.started = true;
    this.arm();
  }

  /** The next slice's timer; none while no stream is open (an idle replica is not woken for nothing). */
  private arm(): void {
    if (this.stopped || this.timer || this.sliceOf.size === 0) return;
    this.timer = this.clock.setTimeout(() => {
      const slice = this.slices[this.turn];
      this.turn = (this.turn + 1) % this.slices.length;
      // The next turn is armed first: a stream whose write throws must not end every stream's heartbeats.
      this.timer = undefined;
      this.arm();
      for (const s of slice) this.beat(s);
    }, this.intervalMs / this.slices.length);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
