import { ConfigError, loadConfig } from '../../src/config/atrium-config.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';

// Configuration mistakes are caught and named: misspelt variables, values with the rule they broke, a fleet
// sharing Redis without one link secret.
const MACRO = {
  UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9',
  UPSTREAM_MACRO_TOKEN: 'sbx_macro_mistakes_01',
};

function problemOf(env: Record<string, string>, sandboxed: string[] = []): string {
  try {
    loadConfig(env, UPSTREAMS, sandboxed);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('the configuration loaded');
}

describe('configuration mistakes', () => {
  it('a misspelt variable is a warning naming the nearest known one', () => {
    const c = loadConfig(
      {
        ...MACRO,
        UPSTREAM_MACRO_RATE_PER_SECOND: '5',
        ATRIUM_CACHE_MAX_BYTE: '10',
        ATRIUM_WHATEVER_ELSE: '1',
      },
      UPSTREAMS,
    );
    expect(c.warnings).toEqual([
      'ATRIUM_CACHE_MAX_BYTE (unknown; did you mean ATRIUM_CACHE_MAX_BYTES?)',
      'ATRIUM_WHATEVER_ELSE (unknown)',
      'UPSTREAM_MACRO_RATE_PER_SECOND (unknown; did you mean UPSTREAM_MACRO_RATE_PER_SEC?)',
    ]);
    // Known ones, secret files and the tools' own variables are not.
    expect(
      loadConfig({ ...MACRO, ATRIUM_REQUIRE_REDIS: '1', ATRIUM_CACHE_MAX_BYTES: '0' }, UPSTREAMS).warnings,
    ).toEqual([]);
  });

  it('ATRIUM_CONFIG_STRICT=1 stops the boot on it', () => {
    expect(problemOf({ ...MACRO, ATRIUM_CONFIG_STRICT: '1', ATRIUM_CACHE_MAX_BYTE: '10' })).toBe(
      'Invalid configuration: ATRIUM_CACHE_MAX_BYTE (unknown; did you mean ATRIUM_CACHE_MAX_BYTES?)',
    );
  });

  it('a rejected value is named with its rule, never with the value', () => {
    const message = problemOf({ ...MACRO, ATRIUM_METRICS_TOKEN: 'short-secret', PORT: 'eighty' });
    expect(message).toContain('ATRIUM_METRICS_TOKEN (must be longer than or equal to 16 characters)');
    expect(message).toContain('PORT (');
    expect(message).toContain('must be an integer number');
    expect(message).not.toContain('short-secret');
    expect(problemOf({ ...MACRO, UPSTREAM_MACRO_BURST: '0' })).toContain(
      'UPSTREAM_MACRO_BURST (must not be less than 1)',
    );
  });

  it('replicas sharing Redis need one link secret (not in the sandbox)', () => {
    expect(problemOf({ ...MACRO, REDIS_URL: 'redis://127.0.0.1:6379' })).toContain(
      'ATRIUM_LINK_SECRET (required with REDIS_URL',
    );
    expect(
      loadConfig(
        { ...MACRO, REDIS_URL: 'redis://127.0.0.1:6379', ATRIUM_LINK_SECRET: 'x'.repeat(32) },
        UPSTREAMS,
      ).links.secretSource,
    ).toBe('configured');
    expect(
      loadConfig({ ...MACRO, REDIS_URL: 'redis://127.0.0.1:6379' }, UPSTREAMS, ['macro']).redisUrl,
    ).toBeDefined();
  });
});
