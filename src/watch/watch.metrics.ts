import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, type Registry } from 'prom-client';
import { METRICS_REGISTRY } from '../core/ports/metrics.port.js';

/** How a poll ended: a new answer, the same one, served stale (re-read soon), an error, or put off. */
export type PollOutcome = 'changed' | 'unchanged' | 'stale' | 'error' | 'deferred';

/** What the gauges read when scraped. */
export interface WatchGaugeSource {
  streams(): number;
  resources(role: 'held' | 'followed'): number;
  /** Bytes in the streams' buffers not yet taken by their sockets (clients that do not keep up). */
  bufferedBytes(): number;
}

/**
 * `atrium_watch_streams`, `atrium_watch_resources{role}` (held: this replica polls it; followed: another
 * does), `atrium_watch_polls_total{outcome}` and `atrium_watch_pushes_total` (events sent to streams because
 * an answer changed); for clients that do not keep up, `atrium_watch_buffered_bytes` and
 * `atrium_watch_coalesced_total`.
 */
@Injectable()
export class WatchMetrics {
  private readonly polls: Counter<'outcome'>;
  private readonly pushes: Counter;
  private readonly coalescedEvents: Counter;
  private source?: WatchGaugeSource;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    // The gauges read the service when scraped (readFrom sets it after construction).
    const read = (): WatchGaugeSource | undefined => this.source;
    new Gauge({
      name: 'atrium_watch_streams',
      help: 'Watch streams (GET /watch) open on this replica.',
      registers: [registry],
      collect() {
        this.set(read()?.streams() ?? 0);
      },
    });
    new Gauge({
      name: 'atrium_watch_resources',
      help: 'Resources watched on this replica: held (this replica polls them) or followed (another does).',
      labelNames: ['role'],
      registers: [registry],
      collect() {
        for (const role of ['held', 'followed'] as const) this.set({ role }, read()?.resources(role) ?? 0);
      },
    });
    this.polls = new Counter({
      name: 'atrium_watch_polls_total',
      help: 'Polls of watched resources by this replica, by outcome (changed, unchanged, stale, error, deferred).',
      labelNames: ['outcome'],
      registers: [registry],
    });
    new Gauge({
      name: 'atrium_watch_buffered_bytes',
      help: "Bytes in watch streams' buffers not yet taken by their sockets (clients that do not keep up).",
      registers: [registry],
      collect() {
        this.set(read()?.bufferedBytes() ?? 0);
      },
    });
    this.coalescedEvents = new Counter({
      name: 'atrium_watch_coalesced_total',
      help: 'Answers a client that did not keep up never got because a newer one of the same path replaced them.',
      registers: [registry],
    });
    this.pushes = new Counter({
      name: 'atrium_watch_pushes_total',
      help: 'Events sent to watch streams because an answer changed.',
      registers: [registry],
    });
  }

  readFrom(source: WatchGaugeSource): void {
    this.source = source;
  }

  poll(outcome: PollOutcome): void {
    this.polls.inc({ outcome });
  }

  coalesced(): void {
    this.coalescedEvents.inc();
  }

  pushed(n: number): void {
    if (n > 0) this.pushes.inc(n);
  }
}
