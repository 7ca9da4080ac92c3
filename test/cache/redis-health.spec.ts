import { RedisHealth, RedisTimeoutError } from '../../src/proxy/cache/redis-health.js';

describe('RedisHealth', () => {
  function setup(probeOk: () => boolean) {
    const logs: string[] = [];
    let errors = 0;
    let probes = 0;
    const health = new RedisHealth({
      log: (level, message) => logs.push(`${level}: ${message}`),
      onError: () => errors++,
      probe: async () => {
        probes++;
        if (!probeOk()) throw new Error('still down');
      },
      probeIntervalMs: 20,
    });
    return { health, logs, errors: () => errors, probes: () => probes };
  }
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('a lost connection trips it at once; one log line per transition; every failure counted', async () => {
    let up = false;
    const t = setup(() => up);
    t.health.failed(new Error('ClientOfflineError'));
    t.health.failed(new Error('ClientOfflineError'));
    expect(t.health.available).toBe(false);
    expect(t.errors()).toBe(2);
    expect(t.logs).toHaveLength(1);
    expect(t.logs[0]).toMatch(/^warn: Redis unavailable/);
    await sleep(70);
    expect(t.health.available).toBe(false);
    expect(t.probes()).toBeGreaterThanOrEqual(2);
    up = true;
    await sleep(60);
    expect(t.health.available).toBe(true);
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
