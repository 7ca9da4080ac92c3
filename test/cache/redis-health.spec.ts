import { RedisHealth, RedisTimeoutError } from '../../src/core/redis/redis-health.js';
import { FakeClock } from '../helpers/fake-clock.js';

describe('RedisHealth', () => {
  function setup(probeOk: () => boolean) {
    const logs: string[] = [];
    let errors = 0;
    let probes = 0;
    const clock = new FakeClock();
    const health = new RedisHealth({
      clock,
      log: (level, message) => logs.push(`${level}: ${message}`),
      onError: () => errors++,
      probe: async () => {
        probes++;
        if (!probeOk()) throw new Error('still down');
      },
      probeIntervalMs: 20,
    });
    return { health, clock, logs, errors: () => errors, probes: () => probes };
  }

  it('a lost connection trips it at once; one log line per transition; every failure counted', async () => {
    let up = false;
    const t = setup(() => up);
    t.health.failed(new Error('ClientOfflineError'));
    t.health.failed(new Error('ClientOfflineError'));
    expect(t.health.available).toBe(false);
    expect(t.errors()).toBe(2);
    expect(t.logs).toHaveLength(1);
    expect(t.logs[0]).toMatch(/^warn: Redis unavailable/);
    expect(t.probes()).toBe(0);
    await t.clock.advance(19);
    expect(t.probes()).toBe(0);
    await t.clock.advance(1);
    expect(t.probes()).toBe(1);
    await t.clock.advance(40);
    expect(t.health.available).toBe(false);
    expect(t.probes()).toBe(3);
    up = true;
    await t.clock.advance(20);
    expect(t.probes()).toBe(4);
    expect(t.health.available).toBe(true);
    // Up again: no more probes.
    await t.clock.advance(1000);
    expect(t.probes()).toBe(4);
    expect(t.clock.pending).toBe(0);
    expect(t.logs).toEqual([expect.stringMatching(/^warn:/), 'log: Redis is back for the response cache']);
    t.health.close();
  });

  it('timeouts trip it only when three come in a row; a success in between resets the count', () => {
    const t = setup(() => true);
    t.health.failed(new RedisTimeoutError(250));
    t.health.failed(new RedisTimeoutError(250));
    t.health.succeeded();
    t.health.failed(new RedisTimeoutError(250));
    t.health.failed(new Error('Command timed out'));
    expect(t.health.available).toBe(true);
    t.health.failed(new RedisTimeoutError(250));
    expect(t.health.available).toBe(false);
    expect(t.errors()).toBe(5);
    t.health.close();
  });
});
