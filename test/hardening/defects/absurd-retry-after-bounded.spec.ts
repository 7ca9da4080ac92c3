import { ConfigError, loadConfig } from '../../../src/config/atrium-config.js';
import { testConsumer } from '../../helpers/consumers.js';
import { http, startGateway, type GatewayHandle } from '../../helpers/gateway.js';
import { describeRedis } from '../../helpers/redis.js';
import { eventually } from '../../helpers/eventually.js';
import { RawVendor } from '../../helpers/raw-vendor.js';
import { UPSTREAMS } from '../../../src/upstreams/index.js';

const TOKEN = 'sbx_test_hardening_09_vendor_5b3f';
/** The cooldown maximum of this suite (the default is 600 s; a short one lets the test see the end). */
const MAX_SECONDS = 2;
const DEFAULT_SECONDS = 1;

/** The scenario, on one replica's own limiter or on the fleet's through Redis. */
function cooldownCases(extraEnv: Record<string, string> = {}): void {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  let vendor: RawVendor;
  let gw: GatewayHandle;
  /** Headers of the vendor's next 429; after it the vendor has recovered. */
  let next429: Record<string, string> | undefined;
  const vendorCalls: number[] = [];

  beforeAll(async () => {
    vendor = await new RawVendor().start();
    vendor.handler = (_req, res) => {
      vendorCalls.push(Date.now());
      if (next429) {
        const headers = next429;
        next429 = undefined;
        res.writeHead(429, { 'content-type': 'application/json', ...headers });
        res.end('{"errors":{"status":429,"code":"TOO_MANY_REQUESTS","message":"Too many requests"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data":[]}');
    };
    gw = await startGateway({
      env: {
        UPSTREAM_MACRO_BASE_URL: vendor.url,
        UPSTREAM_MACRO_TOKEN: TOKEN,
        UPSTREAM_MACRO_COOLDOWN_DEFAULT_SECONDS: String(DEFAULT_SECONDS),
        UPSTREAM_MACRO_COOLDOWN_MAX_SECONDS: String(MAX_SECONDS),
        // One call per request, a steady budget: what is measured is the cooldown alone.
        UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
        UPSTREAM_MACRO_AIMD: 'off',
        UPSTREAM_MACRO_RATE_PER_SEC: '100',
        UPSTREAM_MACRO_BURST: '100',
        ATRIUM_CACHE_TTL_OVERRIDES: 'series=0',
        ...extraEnv,
      },
      consumers: [reader.consumer],
    });
    if (extraEnv.REDIS_URL)
      await eventually(
        async () =>
          (await http(gw.url + '/health/ready'))
            .json()
            .upstreams.find((u: { name: string }) => u.name === 'macro')?.budget === 'shared',
        { what: 'the shared budget' },
      );
  });
  afterAll(async () => {
    await gw?.close();
    await vendor?.close();
  });
  beforeEach(() => {
    vendorCalls.length = 0;
  });

  const get = () => http(gw.url + '/macro/series/1', { headers: { authorization: `Bearer ${reader.key}` } });
  const now = Date.now();
  const farDate = new Date(now + 10 * 365 * 86_400_000).toUTCString();

  /** Until the gateway serves again (polling it; refused polls never reach the vendor). */
  async function untilServed(withinMs: number): Promise<number> {
    const started = Date.now();
    for (;;) {
      const res = await get();
      if (res.status === 200) return Date.now();
      expect(res.status).toBe(429);
      expect(res.json().error.code).toBe('UPSTREAM_RATE_LIMITED');
      if (Date.now() - started > withinMs) throw new Error(`still refused after ${withinMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it.each<[string, Record<string, string>, number, number]>([
    ['Retry-After: 999999999', { 'retry-after': '999999999' }, MAX_SECONDS, MAX_SECONDS],
    ['Retry-After as an HTTP date ten years ahead', { 'retry-after': farDate }, MAX_SECONDS, MAX_SECONDS],
    [
      'X-RateLimit-Reset as an epoch a year ahead',
      { 'x-ratelimit-reset': String(Math.floor(now / 1000) + 365 * 86_400) },
      MAX_SECONDS,
      MAX_SECONDS,
    ],
    ['RateLimit-Reset: 999999999', { 'ratelimit-reset': '999999999' }, MAX_SECONDS, MAX_SECONDS],
    // Garbage and negative values are no header: the default cooldown (doubling on a quick repeat).
    ['Retry-After: soon', { 'retry-after': 'soon' }, DEFAULT_SECONDS, MAX_SECONDS],
    ['Retry-After: -30', { 'retry-after': '-30' }, DEFAULT_SECONDS, MAX_SECONDS],
  ])('%s: a cooldown of at most the configured maximum', async (_name, headers, min, max) => {
    next429 = headers;
    const limited = await get();
    expect(limited.status).toBe(429);
    const body = limited.json();
    expect(body.error).toMatchObject({
      code: 'UPSTREAM_RATE_LIMITED',
      upstream: 'macro',
      upstreamStatus: 429,
    });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(min);
    expect(retryAfter).toBeLessThanOrEqual(max);
    expect(body.error.retryAfterSeconds).toBe(retryAfter);
    expect(limited.headers['x-request-id']).toBe(body.error.requestId);

    // The upstream is back as soon as the (capped) cooldown ends, and not called before.
    const servedAt = await untilServed(retryAfter * 1000 + 1500);
    expect(vendorCalls).toHaveLength(2);
    expect(vendorCalls[1] - vendorCalls[0]).toBeGreaterThanOrEqual(retryAfter * 1000 - 100);
    expect(servedAt - vendorCalls[0]).toBeLessThanOrEqual(retryAfter * 1000 + 1500);
  });
}

describe('an absurd Retry-After is capped and never closes an upstream for a day', () => {
  describe('one replica', () => cooldownCases());

  describeRedis('a fleet sharing the cooldown through Redis', ({ prefix, url }) =>
    cooldownCases({ REDIS_URL: url, ATRIUM_REDIS_PREFIX: prefix }),
  );

  describe('the maximum is a validated setting', () => {
    const base: Record<string, string> = {};
    for (const name of ['MACRO', 'COMPANY', 'DOCUMENTS', 'DEALS']) {
      base[`UPSTREAM_${name}_BASE_URL`] = 'http://127.0.0.1:9';
      base[`UPSTREAM_${name}_TOKEN`] = 'unused-test-token';
    }

    it('defaults to 600 s and bounds every cooldown', () => {
      const c = loadConfig(base, UPSTREAMS);
      expect(c.upstreams.macro.limits.cooldown.maxSeconds).toBe(600);
      const set = loadConfig({ ...base, UPSTREAM_DEALS_COOLDOWN_MAX_SECONDS: '3600' }, UPSTREAMS);
      expect(set.upstreams.deals.limits.cooldown.maxSeconds).toBe(3600);
    });

    it.each(['0', '-5', 'soon', '1.5', '86401'])('%j is refused, naming the variable', (value) => {
      expect(() => loadConfig({ ...base, UPSTREAM_MACRO_COOLDOWN_MAX_SECONDS: value }, UPSTREAMS)).toThrow(
        ConfigError,
      );
      expect(() => loadConfig({ ...base, UPSTREAM_MACRO_COOLDOWN_MAX_SECONDS: value }, UPSTREAMS)).toThrow(
        'UPSTREAM_MACRO_COOLDOWN_MAX_SECONDS',
      );
    });
  });
});
