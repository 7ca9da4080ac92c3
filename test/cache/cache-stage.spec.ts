import { Readable } from 'node:stream';
import { settled } from '../helpers/answer.js';
import { Registry } from 'prom-client';
import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { CacheMetrics } from '../../src/proxy/cache-metrics.js';
import type { CacheSettings } from '../../src/proxy/cache/cache-settings.js';
import { MemoryResponseStore } from '../../src/proxy/cache/memory-response.store.js';
import { cacheStage } from '../../src/proxy/stages/cache.stage.js';
import { resolveTtlMs } from '../../src/proxy/cache/cache-policy.js';
import { compose } from '../../src/proxy/compose.js';
import type {
  Handler,
  ProxyRequest,
  ProxyResponse,
  RouteDefinition,
} from '../../src/proxy/pipeline.types.js';

const routes = {
  list: { id: 't.feeds.list', method: 'GET', path: '/feeds', family: 'feeds', cacheTtlMs: 1_000 },
  get: { id: 't.feeds.get', method: 'GET', path: '/feeds/{id}', family: 'feeds', cacheTtlMs: 1_000 },
  patch: { id: 't.feeds.update', method: 'PATCH', path: '/feeds/{id}', family: 'feeds' },
  layout: { id: 't.layout', method: 'GET', path: '/layout', family: 'layout', cacheTtlMs: 1_000 },
  report: { id: 't.usage.report', method: 'GET', path: '/Usage/report/', family: 'usage', sideEffect: true },
  file: { id: 't.visual', method: 'GET', path: '/visual', family: 'series', file: true },
  nottl: { id: 't.nottl', method: 'GET', path: '/nottl', family: 'misc' },
} as const satisfies Record<string, RouteDefinition>;

const T0 = 1_800_000_000_000;

const BASE: CacheSettings = {
  maxEntryBytes: 10 * 1024 * 1024,
  ttlOverrides: {},
  staleWhileRevalidateMs: 0,
  staleIfErrorMs: 0,
  negativeTtlMs: 0,
};

/** A scripted upstream: counts calls, answers what the test says, optionally holds answers until released. */
class Upstream {
  calls = 0;
  seen: ProxyRequest[] = [];
  body = Buffer.from('{"data":[1,2,3]}');
  status = 200;
  error?: Error;
  private gate?: Promise<void>;
  private open?: () => void;

  private gateGetsOnly = false;

  hold(getsOnly = false): void {
    this.gateGetsOnly = getsOnly;
    this.gate = new Promise((r) => (this.open = r));
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  readonly handler: Handler = async (req): Promise<ProxyResponse> => {
    this.calls++;
    this.seen.push(req);
    if (this.gate && (!this.gateGetsOnly || req.method === 'GET')) await this.gate;
    if (this.error) throw this.error;
    if (req.route.file) return { status: 200, headers: {}, body: Readable.from([Buffer.from('file')]) };
    return { status: this.status, headers: { 'content-type': 'application/json' }, body: this.body };
  };
}

function setup(
  settings: Partial<CacheSettings> = {},
  maxBytes = 1024 * 1024,
  refuse?: (req: ProxyRequest) => GatewayError | undefined,
) {
  const registry = new Registry();
  const store = new MemoryResponseStore({ maxBytes });
  const options = {
    upstream: 't',
    routes: Object.values(routes),
    store,
    settings: { ...BASE, ...settings },
    events: new CacheMetrics(registry).forUpstream('t'),
  };
  const upstream = new Upstream();
  const handler = compose([cacheStage({ ...options, refuse })], upstream.handler);
  const requestOf = (
    route: RouteDefinition = routes.list,
    partial: Partial<ProxyRequest> = {},
  ): ProxyRequest => ({
    upstream: 't',
    route,
    method: route.method,
    path: route.path,
    query: [['limit', '2']],
    headers: {},
    consumerId: 'c',
    requestId: 'r',
    format: 'json',
    lang: 'en',
    credentialId: 'token:abc',
    deadline: Date.now() + 5_000,
    noCache: false,
    weight: 1,
    ...partial,
  });
  const call = (route: RouteDefinition = routes.list, partial: Partial<ProxyRequest> = {}) =>
    settled(handler, requestOf(route, partial));
  const events = async (outcome: string) => {
    const m = await registry.getSingleMetric('atrium_cache_events_total')!.get();
    return m.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  };
  return { store, upstream, call, events, handler, requestOf, close: () => store.close() };
}

const bodyOf = (res: ProxyResponse) => (res.body as Buffer).toString();
const flush = () => new Promise((r) => setImmediate(r));

describe('cache stage', () => {
  beforeEach(() =>
    jest.useFakeTimers({
      now: T0,
      doNotFake: [
        'setTimeout',
        'clearTimeout',
        'setInterval',
        'clearInterval',
        'setImmediate',
        'clearImmediate',
        'nextTick',
        'queueMicrotask',
        'hrtime',
        'performance',
      ],
    }),
  );
  afterEach(() => jest.useRealTimers());

  it('MISS then HIT with the same bytes and headers, Age from the store time', async () => {
    const t = setup();
    const miss = await t.call();
    expect(miss).toMatchObject({ status: 200, cache: 'MISS' });
    jest.setSystemTime(T0 + 700);
    const hit = await t.call(routes.list, {
      query: [
        ['limit', '2'],
        ['token', 'atr_consumer_key'],
      ],
    });
    expect(hit.cache).toBe('HIT');
    expect(hit.ageSeconds).toBeCloseTo(0.7);
    expect((hit.body as Buffer).equals(miss.body as Buffer)).toBe(true);
    // The stored answer carries the gateway's validator of its bytes, set once on the miss.
    expect(miss.headers.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(hit.headers).toEqual({ 'content-type': 'application/json', etag: miss.headers.etag });
    expect(t.upstream.calls).toBe(1);
    expect(await t.events('hit')).toBe(1);
    expect(await t.events('miss')).toBe(1);
    await t.close();
  });

  it('a cached 404 is thrown from the store without an upstream call', async () => {
    const t = setup({ negativeTtlMs: 500 });
    t.upstream.error = new GatewayError('NOT_FOUND', {
      upstream: 't',
      upstreamStatus: 404,
      fromUpstream: true,
    });
    await expect(t.call(routes.get)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(t.call(routes.get)).rejects.toBeInstanceOf(GatewayError);
    expect(t.upstream.calls).toBe(1);
    await t.close();
  });

  it('expires after the TTL (no stale windows configured)', async () => {
    const t = setup();
    await t.call();
    jest.setSystemTime(T0 + 1_001);
    expect((await t.call()).cache).toBe('MISS');
    expect(t.upstream.calls).toBe(2);
    await t.close();
  });

  it('TTL per family, overridable by config (upstream.family beats family; 0 turns caching off)', async () => {
    expect(resolveTtlMs('t', routes.list, {})).toBe(1_000);
    expect(resolveTtlMs('t', routes.list, { feeds: 5_000 })).toBe(5_000);
    expect(resolveTtlMs('t', routes.list, { feeds: 5_000, 't.feeds': 9_000 })).toBe(9_000);
    const t = setup({ ttlOverrides: { feeds: 10_000, layout: 0 } });
    await t.call();
    jest.setSystemTime(T0 + 5_000);
    expect((await t.call()).cache).toBe('HIT');
    expect((await t.call(routes.layout)).cache).toBe('BYPASS');
    expect((await t.call(routes.layout)).cache).toBe('BYPASS');
    expect(t.upstream.calls).toBe(3);
    await t.close();
  });

  it('stores only 200s: other statuses are served and counted as store_skip', async () => {
    const t = setup();
    t.upstream.status = 203;
    expect((await t.call()).status).toBe(203);
    expect((await t.call()).cache).toBe('MISS');
    expect(t.upstream.calls).toBe(2);
    expect(await t.events('store_skip')).toBe(2);
    await t.close();
  });

  it('answers over the entry size cap are served but not stored', async () => {
    const t = setup({ maxEntryBytes: 100 });
    t.upstream.body = Buffer.alloc(101, 0x61);
    expect((await t.call()).body).toHaveLength(101);
    expect((await t.call()).cache).toBe('MISS');
    expect(t.upstream.calls).toBe(2);
    t.upstream.body = Buffer.alloc(100, 0x61);
    await t.call();
    expect((await t.call()).cache).toBe('HIT');
    await t.close();
  });

  it('404s are not stored by default; with a negative TTL they are, briefly', async () => {
    const notFound = new GatewayError('NOT_FOUND', {
      upstream: 't',
      upstreamStatus: 404,
      fromUpstream: true,
      message: 'no feed',
    });
    const off = setup();
    off.upstream.error = notFound;
    await expect(off.call(routes.get)).rejects.toBe(notFound);
    await expect(off.call(routes.get)).rejects.toBe(notFound);
    expect(off.upstream.calls).toBe(2);
    await off.close();

    const on = setup({ negativeTtlMs: 500 });
    on.upstream.error = notFound;
    await expect(on.call(routes.get)).rejects.toBe(notFound);
    await expect(on.call(routes.get)).rejects.toMatchObject({
      code: 'NOT_FOUND',
      status: 404,
      message: 'no feed',
      upstreamStatus: 404,
    });
    expect(on.upstream.calls).toBe(1);
    jest.setSystemTime(T0 + 501);
    await expect(on.call(routes.get)).rejects.toBe(notFound);
    expect(on.upstream.calls).toBe(2);
    await on.close();
  });

  it('writes, files, side-effecting GETs and GETs without a TTL bypass the cache and are never coalesced', async () => {
    const t = setup();
    t.upstream.hold();
    const concurrent = (route: RouteDefinition) => Promise.all([t.call(route), t.call(route), t.call(route)]);
    const all = Promise.all([
      concurrent(routes.report),
      concurrent(routes.file),
      concurrent(routes.nottl),
      concurrent(routes.patch),
    ]);
    await flush();
    t.upstream.release();
    const results = (await all).flat();
    expect(results.map((r) => r.cache)).toEqual(Array(12).fill('BYPASS'));
    expect(t.upstream.calls).toBe(12);
    expect((await t.call(routes.report)).cache).toBe('BYPASS');
    expect(t.upstream.calls).toBe(13);
    await t.close();
  });

  it('a successful write drops the family for that credential (and only that family and credential)', async () => {
    const t = setup();
    await t.call(routes.list);
    await t.call(routes.get, { path: '/feeds/FD-1' });
    await t.call(routes.layout);
    await t.call(routes.list, { credentialId: 'token:other' });
    expect(t.upstream.calls).toBe(4);
    expect((await t.call(routes.patch, { path: '/feeds/FD-1' })).cache).toBe('BYPASS');
    expect((await t.call(routes.list)).cache).toBe('MISS');
    expect((await t.call(routes.get, { path: '/feeds/FD-1' })).cache).toBe('MISS');
    expect((await t.call(routes.layout)).cache).toBe('HIT');
    expect((await t.call(routes.list, { credentialId: 'token:other' })).cache).toBe('HIT');
    // A failed write invalidates nothing.
    t.upstream.error = new GatewayError('UPSTREAM_BAD_REQUEST', { upstream: 't' });
    await expect(t.call(routes.patch, { path: '/feeds/FD-1' })).rejects.toMatchObject({
      code: 'UPSTREAM_BAD_REQUEST',
    });
    t.upstream.error = undefined;
    expect((await t.call(routes.list)).cache).toBe('HIT');
    await t.close();
  });

  it('an answer whose call raced a write is not stored', async () => {
    const t = setup();
    t.upstream.hold(true);
    const read = t.call(routes.list);
    await flush();
    // The write completes (and invalidates) while the read's upstream call is still running.
    await t.call(routes.patch, { path: '/feeds/FD-1' });
    t.upstream.release();
    expect((await read).cache).toBe('MISS');
    expect(await t.events('store_skip')).toBe(1);
    expect((await t.call(routes.list)).cache).toBe('MISS');
    await t.close();
  });

  it('N concurrent identical misses make one upstream call; the others are COALESCED', async () => {
    const t = setup();
    t.upstream.hold();
    const all = Promise.all(Array.from({ length: 50 }, () => t.call()));
    await flush();
    t.upstream.release();
    const res = await all;
    expect(t.upstream.calls).toBe(1);
    expect(res.filter((r) => r.cache === 'MISS')).toHaveLength(1);
    expect(res.filter((r) => r.cache === 'COALESCED')).toHaveLength(49);
    expect(new Set(res.map(bodyOf)).size).toBe(1);
    expect(await t.events('coalesced')).toBe(49);
    await t.close();
  });

  it('a failing leader releases its waiters at once with the same error', async () => {
    const t = setup();
    const boom = new GatewayError('UPSTREAM_ERROR', { upstream: 't', upstreamStatus: 500 });
    t.upstream.hold();
    t.upstream.error = boom;
    const all = Array.from({ length: 20 }, () =>
      t.call().then(
        () => 'ok',
        (e: unknown) => e,
      ),
    );
    await flush();
    t.upstream.release();
    const results = await Promise.all(all);
    expect(results.every((e) => e === boom)).toBe(true);
    expect(t.upstream.calls).toBe(1);
    await t.close();
  });

  it('no-cache forces a refresh, still coalesced', async () => {
    const t = setup();
    await t.call();
    t.upstream.body = Buffer.from('{"data":[4]}');
    t.upstream.hold();
    const all = Promise.all(Array.from({ length: 10 }, () => t.call(routes.list, { noCache: true })));
    await flush();
    t.upstream.release();
    const res = await all;
    expect(t.upstream.calls).toBe(2);
    expect(res.map((r) => r.cache).sort()).toEqual(['MISS', ...Array(9).fill('COALESCED')].sort());
    expect(res.every((r) => bodyOf(r) === '{"data":[4]}')).toBe(true);
    expect(bodyOf(await t.call())).toBe('{"data":[4]}');
    await t.close();
  });

  describe('stale windows', () => {
    it('stale-while-revalidate: STALE within the window while one background refresh runs', async () => {
      const t = setup({ staleWhileRevalidateMs: 5_000 });
      await t.call();
      jest.setSystemTime(T0 + 1_500);
      t.upstream.body = Buffer.from('{"data":["new"]}');
      t.upstream.hold();
      const stale = await Promise.all(Array.from({ length: 5 }, () => t.call()));
      expect(stale.map((r) => r.cache)).toEqual(Array(5).fill('STALE'));
      expect(stale.every((r) => bodyOf(r) === '{"data":[1,2,3]}')).toBe(true);
      expect(stale[0].ageSeconds).toBeCloseTo(1.5);
      await flush();
      expect(t.upstream.calls).toBe(2); // the miss and ONE refresh
      t.upstream.release();
      await flush();
      await flush();
      const fresh = await t.call();
      expect(fresh.cache).toBe('HIT');
      expect(bodyOf(fresh)).toBe('{"data":["new"]}');
      expect(await t.events('stale')).toBe(5);
      await t.close();
    });

    it('stale-while-revalidate: a failing refresh keeps the stale entry; past the window it is a miss', async () => {
      const t = setup({ staleWhileRevalidateMs: 2_000 });
      await t.call();
      t.upstream.error = new GatewayError('UPSTREAM_ERROR', { upstream: 't' });
      jest.setSystemTime(T0 + 1_500);
      expect((await t.call()).cache).toBe('STALE');
      await flush();
      jest.setSystemTime(T0 + 2_500);
      expect((await t.call()).cache).toBe('STALE');
      jest.setSystemTime(T0 + 3_001);
      await expect(t.call()).rejects.toMatchObject({ code: 'UPSTREAM_ERROR' });
      await t.close();
    });

    it('stale-if-error: a retryable failure is answered from the stale entry within the window, the envelope after', async () => {
      const t = setup({ staleIfErrorMs: 10_000 });
      await t.call();
      for (const err of [
        new GatewayError('UPSTREAM_ERROR', { upstream: 't', upstreamStatus: 500 }),
        new GatewayError('UPSTREAM_UNAVAILABLE', { upstream: 't', upstreamCode: 'ECONNREFUSED' }),
        new GatewayError('UPSTREAM_TIMEOUT', { upstream: 't' }),
        new GatewayError('UPSTREAM_RATE_LIMITED', { upstream: 't', retryAfterSeconds: 30 }),
        new GatewayError('UPSTREAM_UNAVAILABLE', { upstream: 't', upstreamCode: 'CIRCUIT_OPEN' }),
      ]) {
        t.upstream.error = err;
        jest.setSystemTime(T0 + 5_000);
        const res = await t.call();
        expect(res.cache).toBe('STALE');
        expect(bodyOf(res)).toBe('{"data":[1,2,3]}');
        expect(res.ageSeconds).toBeCloseTo(5);
      }
      // A non-retryable error is the consumer's problem: no stale copy hides it.
      t.upstream.error = new GatewayError('UPSTREAM_BAD_REQUEST', { upstream: 't' });
      await expect(t.call()).rejects.toMatchObject({ code: 'UPSTREAM_BAD_REQUEST' });
      t.upstream.error = new GatewayError('UPSTREAM_ERROR', { upstream: 't' });
      jest.setSystemTime(T0 + 11_001);
      await expect(t.call()).rejects.toMatchObject({ code: 'UPSTREAM_ERROR' });
      await t.close();
    });
  });

  describe('while the upstream refuses every call (cooldown, open breaker)', () => {
    const cooling = () =>
      GatewayError.expected('UPSTREAM_RATE_LIMITED', { upstream: 't', retryAfterSeconds: 30 });

    it('a miss with nothing to fall back on is refused at once: no upstream call, counted as a miss', async () => {
      let refusing = false;
      const asked: string[] = [];
      const t = setup({ staleIfErrorMs: 10_000 }, 1024 * 1024, (req) => {
        asked.push(req.requestId);
        return refusing ? cooling() : undefined;
      });
      // Not refusing: the miss goes its way and is stored.
      expect((await t.call()).cache).toBe('MISS');
      expect(t.upstream.calls).toBe(1);
      refusing = true;
      // A fresh hit is served: the refusal is not even asked.
      asked.length = 0;
      expect(await t.call()).toMatchObject({ cache: 'HIT' });
      expect(asked).toEqual([]);
      // A new key: refused with the gate's error, as the limit stage would have refused it.
      const refused = t.call(routes.list, { query: [['limit', '3']] });
      await expect(refused).rejects.toBeInstanceOf(GatewayError);
      await expect(refused).rejects.toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', retryAfterSeconds: 30 });
      expect(t.upstream.calls).toBe(1);
      expect(await t.events('miss')).toBe(2);
      // A stale entry within stale-if-error still goes the full way, and is served when the call fails.
      jest.setSystemTime(T0 + 5_000);
      t.upstream.error = cooling();
      const stale = await t.call();
      expect(stale.cache).toBe('STALE');
      expect(t.upstream.calls).toBe(2);
      // Past the window there is nothing to fall back on: refused before the upstream again.
      jest.setSystemTime(T0 + 11_001);
      await expect(t.call()).rejects.toMatchObject({ code: 'UPSTREAM_RATE_LIMITED' });
      expect(t.upstream.calls).toBe(2);
      await t.close();
    });
  });
});
