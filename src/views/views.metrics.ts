import { Inject, Injectable } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { METRICS_REGISTRY } from '../core/ports/metrics.port.js';
import {
  FastCounter,
  FastHistogram,
  type CounterHandle,
  type HistogramHandle,
} from '../metrics/fast-metrics.js';

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
  private readonly requests: FastCounter;
  private readonly parts: FastCounter;
  private readonly duration: FastHistogram;
  private readonly counts = new Map<string, ViewCounts>();
  /** Series bound once per label combination (names from the views file: bounded). */
  private readonly bound = new Map<string, CounterHandle>();
  private readonly durations = new Map<string, HistogramHandle>();

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.requests = new FastCounter(
      'atrium_view_requests_total',
      'Composite view calls by view and outcome (complete, partial, failed, not_modified).',
      ['view', 'outcome'],
      registry,
    );
    this.parts = new FastCounter(
      'atrium_view_parts_total',
      "View parts by view, part and result (the part's X-Cache, or error, timeout, skipped).",
      ['view', 'part', 'result'],
      registry,
    );
    this.duration = new FastHistogram(
      'atrium_view_duration_seconds',
      'Time to answer a composite view call.',
      ['view'],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registry,
    );
  }

  private counter(c: FastCounter, ...labels: string[]): CounterHandle {
    const key = c.name + '\u0000' + labels.join('\u0000');
    let h = this.bound.get(key);
    if (!h) this.bound.set(key, (h = c.labels(...labels)));
    return h;
  }

  /** The bound call series of a view, by outcome. */
  private readonly callSeries = new Map<string, Map<ViewOutcome, CounterHandle>>();
  /** The bound part series of a view, by part then result (no key built per part). */
  private readonly partSeries = new Map<string, Map<string, Map<string, CounterHandle>>>();

  recordCall(view: string, outcome: ViewOutcome, seconds: number): void {
    let byOutcome = this.callSeries.get(view);
    if (!byOutcome) this.callSeries.set(view, (byOutcome = new Map<ViewOutcome, CounterHandle>()));
    let h = byOutcome.get(outcome);
    if (!h) byOutcome.set(outcome, (h = this.counter(this.requests, view, outcome)));
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
    if (!byPart) this.partSeries.set(view, (byPart = new Map<string, Map<string, CounterHandle>>()));
    let byResult = byPart.get(part);
    if (!byResult) byPart.set(part, (byResult = new Map<string, CounterHandle>()));
    let h = byResult.get(result);
    if (!h) byResult.set(result, (h = this.counter(this.parts, view, part, result)));
    h.inc();
  }

  countsOf(view: string): ViewCounts {
    return {
      ...(this.counts.get(view) ?? { requests: 0, complete: 0, partial: 0, failed: 0, notModified: 0 }),
    };
  }
}
