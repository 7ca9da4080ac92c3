import { Registry } from 'prom-client';
import { U_CACHE, U_REQUESTS, U_VENDOR_CALLS } from '../../src/usage/usage-counters.js';
import { UsageRecorder } from '../../src/usage/usage-recorder.js';
import { MemoryUsageStore, type UsageDelta, type UsageStore } from '../../src/usage/usage-store.js';
import { FakeClock } from '../helpers/fake-clock.js';

/** A shared store that can be made to fail, as Redis can. */
class FlakyStore implements UsageStore {
  readonly kind = 'redis' as const;
  readonly inner = new MemoryUsageStore();
  down = false;
  adds = 0;
  async add(deltas: readonly UsageDelta[]): Promise<void> {
    this.adds++;
    if (this.down) throw new Error('connection refused');
    this.inner.addNow(deltas);
  }
  read(days: readonly string[]): Promise<UsageDelta[]> {
    return this.inner.read(days);
  }
}

describe('UsageRecorder', () => {
  it('splits counts at UTC midnight and reports each day apart', async () => {
    const clock = new FakeClock(Date.UTC(2026, 2, 14, 23, 59, 59));
    const r = new UsageRecorder({ store: new MemoryUsageStore(), clock, flushEveryMs: 0 });
    r.count('alpha', 'macro', U_REQUESTS);
    r.count('alpha', 'macro', U_VENDOR_CALLS);
    await clock.advance(2000);
    r.count('alpha', 'macro', U_REQUESTS);
    r.count('beta', 'macro', U_CACHE);
    const report = await r.report({ fromMs: Date.UTC(2026, 2, 14), toMs: Date.UTC(2026, 2, 15) });
    expect(report.rows.map((x) => [x.day, x.consumer, x.requests, x.vendorCalls, x.cacheAnswers])).toEqual([
      ['2026-03-14', 'alpha', 1, 1, 0],
      ['2026-03-15', 'alpha', 1, 0, 0],
      ['2026-03-15', 'beta', 0, 0, 1],
    ]);
    expect(report.totals).toMatchObject({ requests: 2, vendorCalls: 1, cacheAnswers: 1 });
    const one = await r.report({
      fromMs: Date.UTC(2026, 2, 15),
      toMs: Date.UTC(2026, 2, 15),
      consumer: 'beta',
    });
    expect(one.rows).toHaveLength(1);
  });

  it('flushes once a second in one batch, and keeps what a failed flush could not store', async () => {
    const clock = new FakeClock(Date.UTC(2026, 2, 14, 12));
    const store = new FlakyStore();
    const r = new UsageRecorder({ store, clock, flushEveryMs: 1000 });
    for (let i = 0; i < 500; i++) r.count('alpha', 'macro', U_REQUESTS);
    await clock.advance(1000);
    expect(store.adds).toBe(1);
    const today = Date.UTC(2026, 2, 14);
    expect((await store.read(['2026-03-14']))[0].counts[U_REQUESTS]).toBe(500);

    store.down = true;
    r.count('alpha', 'macro', U_REQUESTS);
    await clock.advance(1000);
    await clock.advance(1000);
    expect(store.adds).toBeGreaterThanOrEqual(3);
    await expect(r.report({ fromMs: today, toMs: today })).rejects.toThrow('connection refused');
    store.down = false;
    r.count('alpha', 'macro', U_REQUESTS);
    const report = await r.report({ fromMs: today, toMs: today });
    expect(report.rows[0].requests).toBe(502);
    await r.close();
    expect(clock.pending).toBe(0);
  });

  it('exports the counters labelled by consumer and upstream, from zero', async () => {
    const registry = new Registry();
    const clock = new FakeClock();
    const r = new UsageRecorder({ store: new MemoryUsageStore(), clock, flushEveryMs: 0, registry });
    r.cell('alpha', 'deals');
    r.count('alpha', 'macro', U_VENDOR_CALLS);
    const text = await registry.metrics();
    expect(text).toContain('atrium_consumer_vendor_calls_total{consumer="alpha",upstream="macro"} 1');
    expect(text).toContain('atrium_consumer_vendor_calls_total{consumer="alpha",upstream="deals"} 0');
    expect(text).toContain('atrium_consumer_shield_rejections_total{consumer="alpha",upstream="macro"} 0');
  });
});
