import { Counter, Histogram, Registry } from 'prom-client';
import { FastCounter, FastHistogram } from '../../src/metrics/fast-metrics.js';
import { parsePrometheusText } from './prometheus-text.js';

/** The hot-path metrics must export exactly what prom-client's own would, for the same observations. */
describe('FastCounter and FastHistogram', () => {
  const buckets = [0.005, 0.05, 0.5, 5];
  const values = [0.001, 0.004, 0.02, 0.3, 0.3, 2, 9, 0.05];

  it('export the same text as prom-client for the same observations', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const fc = new FastCounter('x_total', 'help "q"\\', ['a', 'b'], ours);
    const pc = new Counter({
      name: 'x_total',
      help: 'help "q"\\',
      labelNames: ['a', 'b'],
      registers: [theirs],
    });
    const fh = new FastHistogram('h_seconds', 'h', ['a'], buckets, ours);
    const ph = new Histogram({
      name: 'h_seconds',
      help: 'h',
      labelNames: ['a'],
      buckets,
      registers: [theirs],
    });
    fc.labels('1', 'x"y\\z\n').inc();
    fc.labels('1', 'x"y\\z\n').inc(2);
    fc.labels('2', 'w').inc(0);
    pc.inc({ a: '1', b: 'x"y\\z\n' });
    pc.inc({ a: '1', b: 'x"y\\z\n' }, 2);
    pc.inc({ a: '2', b: 'w' }, 0);
    for (const v of values) {
      fh.labels('p').observe(v);
      ph.observe({ a: 'p' }, v);
    }
    const a = await ours.metrics();
    const b = await theirs.metrics();
    // prom-client lists `le` first; compare the parsed samples, order of labels aside.
    const norm = (t: string) =>
      parsePrometheusText(t)
        .samples.map((s) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}=${s.value}`)
        .sort();
    expect(norm(a)).toEqual(norm(b));
    expect(a.split('\n').filter((l) => l.startsWith('#'))).toEqual(
      b.split('\n').filter((l) => l.startsWith('#')),
    );
    expect((await ours.getMetricsAsJSON()).map((m) => m.name)).toEqual(['x_total', 'h_seconds']);
  });

  it('validate names, label values and counter direction', () => {
    const r = new Registry();
    expect(() => new FastCounter('bad name', 'h', [], r)).toThrow(/metric name/);
    expect(() => new FastHistogram('h', 'h', ['le'], [1], r)).toThrow(/label name/);
    const c = new FastCounter('c_total', 'h', ['a'], r);
    expect(() => c.labels()).toThrow(/1 label values/);
    expect(() => c.labels('x').inc(-1)).toThrow(/only goes up/);
    expect(() => new FastCounter('c_total', 'h', ['a'], r)).toThrow(/already been registered/);
  });
});
