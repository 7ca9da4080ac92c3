import type { Registry } from 'prom-client';

/**
 * Counter and histogram for the per-request hot path. prom-client's own labelled `inc`/`observe` hash and
 * validate the label object on every call (about 1 µs each, six calls per request); these validate a label
 * combination once, when its handle is created, and then only add numbers. They register on the same
 * registry and export exactly what prom-client's Counter and Histogram export (`get()`), so the text format,
 * `getSingleMetric()` and `getMetricsAsJSON()` see ordinary metrics.
 */

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

type Labels = Record<string, string>;

interface MetricValue {
  value: number;
  labels: Labels;
  metricName?: string;
}

export interface MetricSnapshot {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum';
}

function check(name: string, labelNames: readonly string[]): void {
  if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${name}`);
  for (const l of labelNames)
    if (!LABEL_NAME.test(l) || l === 'le') throw new Error(`invalid label name ${l} on ${name}`);
}

function labelsOf(labelNames: readonly string[], values: readonly string[], name: string): Labels {
  if (values.length !== labelNames.length)
    throw new Error(`${name} takes ${labelNames.length} label values, got ${values.length}`);
  const labels: Labels = {};
  labelNames.forEach((l, i) => {
    if (typeof values[i] !== 'string') throw new Error(`${name}: label ${l} must be a string`);
    labels[l] = values[i];
  });
  return labels;
}

export interface CounterHandle {
  inc(by?: number): void;
}

export class FastCounter {
  readonly type = 'counter' as const;
  readonly aggregator = 'sum' as const;
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    check(name, labelNames);
    registry.registerMetric(this as never);
  }

  /** The series of one label combination (created at zero, so it is exported from now on). */
  labels(...values: string[]): CounterHandle {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      s = { labels: labelsOf(this.labelNames, values, this.name), value: 0 };
      this.series.set(key, s);
    }
    const series = s;
    return {
      inc: (by = 1) => {
        if (!(by >= 0)) throw new Error(`${this.name}: a counter only goes up`);
        series.value += by;
      },
    };
  }

  async get(): Promise<MetricSnapshot> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values: [...this.series.values()].map((s) => ({ labels: { ...s.labels }, value: s.value })),
      aggregator: this.aggregator,
    };
  }

  reset(): void {
    this.series.clear();
  }
}

export interface HistogramHandle {
  observe(value: number): void;
}

export class FastHistogram {
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly bounds: readonly number[];
  private readonly series = new Map<
    string,
    { labels: Labels; counts: Float64Array; sum: number; count: number }
  >();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    buckets: readonly number[],
    registry: Registry,
  ) {
    check(name, labelNames);
    const sorted = [...buckets].sort((a, b) => a - b);
    if (sorted.length === 0 || sorted.some((b, i) => !Number.isFinite(b) || (i > 0 && b === sorted[i - 1])))
      throw new Error(`${name}: buckets must be distinct finite numbers`);
    this.bounds = sorted;
    registry.registerMetric(this as never);
  }

  labels(...values: string[]): HistogramHandle {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      s = {
        labels: labelsOf(this.labelNames, values, this.name),
        counts: new Float64Array(this.bounds.length),
        sum: 0,
        count: 0,
      };
      this.series.set(key, s);
    }
    const series = s;
    const bounds = this.bounds;
    return {
      observe: (value) => {
        if (!Number.isFinite(value)) throw new Error(`${this.name}: not a finite value`);
        series.sum += value;
        series.count++;
        // Per-bucket counts; made cumulative on export. Values above the last bound only count in +Inf.
        for (let i = 0; i < bounds.length; i++)
          if (value <= bounds[i]) {
            series.counts[i]++;
            break;
          }
      },
    };
  }

  async get(): Promise<MetricSnapshot> {
    const values: MetricValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += s.counts[i];
        values.push({ labels: { ...s.labels, le: String(le) }, value: acc, metricName: bucket });
      });
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: bucket });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
}
