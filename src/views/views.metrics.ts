import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram, type Registry } from 'prom-client';
import { METRICS_REGISTRY } from '../core/ports/metrics.port.js';

/** How a view call ended: every part answered, an optional part did not, a required part did not, or 304. */
export type ViewOutcome = 'complete' | 'partial' | 'failed' | 'not_modified';

/** Per-view counts for the console (since start). */
export interface ViewCounts {
  requests: number;
  complete: number;
  partial: number;
  failed: number;
  notModified: number;
}

/**
 * Per-view metrics: `atrium_view_requests_total{view,outcome}`, `atrium_view_parts_total{view,part,result}`
 * (result: the part's cache outcome, or error / timeout / skipped) and `atrium_view_duration_seconds{view}`.
 * Labels are the names in the views file (bounded by the operator, not by callers).
 */
@Injectable()
export class ViewsMetrics {
  private readonly requests: Counter;
  private readonly parts: Counter;
  private readonly duration: Histogram;
  private readonly counts = new Map<string, ViewCounts>();
  private readonly durations = new Map<string, Histogram.Internal<string>>();

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.requests = new Counter({
      name: 'atrium_view_requests_total',
      help: 'Composite view calls by view and outcome (complete, partial, failed, not_modified).',
      labelNames: ['view', 'outcome'],
      registers: [registry],
    });
    this.parts = new Counter({
      name: 'atrium_view_parts_total',
      help: "View parts by view, part and result (the part's X-Cache, or error, timeout, skipped).",
      labelNames: ['view', 'part', 'result'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'atrium_view_duration_seconds',
      help: 'Time to answer a composite view call.',
      labelNames: ['view'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  }

  /** The bound call series of a view, by outcome. */
  private readonly callSeries = new Map<string, Map<ViewOutcome, Counter.Internal>>();
  /** The bound part series of a view, by part then result (no key built per part). */
  private readonly partSeries = new Map<string, Map<string, Map<string, Counter.Internal>>>();

  recordCall(view: string, outcome: ViewOutcome, seconds: number): void {
    let byOutcome = this.callSeries.get(view);
    if (!byOutcome) this.callSeries.set(view, (byOutcome = new Map<ViewOutcome, Counter.Internal>()));
    let h = byOutcome.get(outcome);
    if (!h) byOutcome.set(outcome, (h = this.requests.labels(view, outcome)));
    h.inc();
    let d = this.durations.get(view);
    if (!d) this.durations.set(view, (d = this.duration.labels(view)));
    d.observe(seconds);
    let c = this.counts.get(view);
    if (!c) this.counts.set(view, (c = { requests: 0, complete: 0, partial: 0, failed: 0, notModified: 0 }));
    c.requests++;
    if (outcome === 'not_modified') c.notModified++;
    else c[outcome]++;
  }

  recordPart(view: string, part: string, result: string): void {
    let byPart = this.partSeries.get(view);
    if (!byPart) this.partSeries.set(view, (byPart = new Map<string, Map<string, Counter.Internal>>()));
    let byResult = byPart.get(part);
    if (!byResult) byPart.set(part, (byResult = new Map<string, Counter.Internal>()));
    let h = byResult.get(result);
    if (!h) byResult.set(result, (h = this.parts.labels(view, part, result)));
    h.inc();
  }

  countsOf(view: string): ViewCounts {
    return {
      ...(this.counts.get(view) ?? { requests: 0, complete: 0, partial: 0, failed: 0, notModified: 0 }),
    };
  }
}
