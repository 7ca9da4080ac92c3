import { Counter, Registry } from 'prom-client';
import { ConsumerQuota } from '../../src/core/throttling/consumer-quota.service.js';
import { FixedWindowThrottlerStorage } from '../../src/core/throttling/fixed-window.storage.js';
import { testConsumer } from '../helpers/consumers.js';
import { FakeClock } from '../helpers/fake-clock.js';

// The quota gauge (and the console's bars) read remainingNow: a spent window shows whole again once it resets.
describe('requests left in a quota window, as the gauge reads them', () => {
  it('is the last count while the window lasts, and the whole limit once it has reset', async () => {
    const clock = new FakeClock();
    const storage = new FixedWindowThrottlerStorage(() => clock.now());
    const rateLimited = new Counter({
      name: 'quota_test_rate_limited_total',
      help: 'test',
      labelNames: ['upstream', 'kind'],
      registers: [new Registry()],
    });
    const quota = new ConsumerQuota(storage, { rateLimited }, clock);
    const { consumer } = testConsumer({
      id: 'bars',
      limits: [{ name: 'short', ttlMs: 1_000, limit: 5 }],
    });
    const headers: Record<string, unknown> = {};
    const sink = { header: (n: string, v: unknown) => (headers[n] = v) };
    for (let i = 0; i < 5; i++) await quota.admit(consumer, sink, 'macro');
    expect(() => quota.admit(consumer, sink, 'macro')).toThrow(/used its 5 requests/);
    const [plan] = [...quota.seenPlans()];
    expect(quota.remainingNow(plan, 0)).toBe(0);
    await clock.advance(999);
    expect(quota.remainingNow(plan, 0)).toBe(0);
    await clock.advance(1);
    expect(quota.remainingNow(plan, 0)).toBe(5);
    storage.onApplicationShutdown();
  });
});
