import { ConfigError, loadConfig, parseTtlOverrides } from '../../src/config/atrium-config.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';

const BASE = Object.fromEntries(
  ['MACRO', 'COMPANY', 'DOCUMENTS', 'DEALS'].flatMap((n) => [
    [`UPSTREAM_${n}_BASE_URL`, 'http://127.0.0.1:9'],
    [`UPSTREAM_${n}_TOKEN`, 'unused-test-token'],
  ]),
);

describe('cache configuration', () => {
  it('parses per-family TTL overrides with units', () => {
    expect(parseTtlOverrides('feeds=10s, macro.layout=30m,dictionary=0,series=1.5h,userdefined=250')).toEqual(
      {
        feeds: 10_000,
        'macro.layout': 1_800_000,
        dictionary: 0,
        series: 5_400_000,
        userdefined: 250,
      },
    );
    expect(parseTtlOverrides(undefined)).toEqual({});
    expect(parseTtlOverrides('')).toEqual({});
    for (const bad of ['feeds', 'feeds=ten', '=10s', 'a.b.c=1s', 'feeds=-1', 'feeds=31d', 'feeds=400h*2'])
      expect(parseTtlOverrides(bad)).toBeUndefined();
  });

  it('has defaults, and names the variable (never the value) when one is wrong', () => {
    const c = loadConfig(BASE, UPSTREAMS);
    expect(c.cache).toEqual({
      maxBytes: 128 * 1024 * 1024,
      maxEntryBytes: 10 * 1024 * 1024,
      ttlOverrides: {},
      staleWhileRevalidateMs: 30_000,
      staleIfErrorMs: 600_000,
      negativeTtlMs: 0,
      coalesceLeaseMs: 3_000,
      redisTimeoutMs: 250,
    });
    expect(c.operatorToken).toBeUndefined();
    const secret = 'short-secret';
    let message = '';
    try {
      loadConfig(
        {
          ...BASE,
          ATRIUM_CACHE_TTL_OVERRIDES: 'feeds=soon',
          ATRIUM_ADMIN_TOKEN: 'short',
          ATRIUM_CACHE_REDIS_TIMEOUT_MS: secret,
        },
        UPSTREAMS,
      );
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message).toContain('ATRIUM_CACHE_TTL_OVERRIDES');
    expect(message).toContain('ATRIUM_ADMIN_TOKEN');
    expect(message).toContain('ATRIUM_CACHE_REDIS_TIMEOUT_MS');
    expect(message).not.toContain('short');
    expect(message).not.toContain('soon');
  });
});
