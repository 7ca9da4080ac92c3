import { createServer, type Server } from 'node:http';
import { settled } from '../helpers/answer.js';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { CacheMetrics } from '../../src/proxy/cache-metrics.js';
import type { CacheSettings } from '../../src/proxy/cache/cache-settings.js';
import { MemoryResponseStore } from '../../src/proxy/cache/memory-response.store.js';
import { compose } from '../../src/proxy/compose.js';
import type { ProxyRequest, ProxyResponse, RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { cacheStage } from '../../src/proxy/stages/cache.stage.js';
import { UndiciTransport } from '../../src/proxy/transport/undici.transport.js';

// The cache stage is self-contained, as undici's deduplicate interceptor is: it computes its own key and keeps
// its own pending map; nothing in front or behind it tells it anything. Real HTTP: a counting upstream on
// port 0 behind the undici transport.

const route = {
  id: 't.series.get',
  method: 'GET',
  path: '/series/{id}',
  family: 'series',
  cacheTtlMs: 60_000,
} as const satisfies RouteDefinition;

const SETTINGS: CacheSettings = {
  maxEntryBytes: 1024 * 1024,
  ttlOverrides: {},
  staleWhileRevalidateMs: 0,
  staleIfErrorMs: 0,
  negativeTtlMs: 0,
};

describe('the cache stage alone, in front of a real transport', () => {
  let server: Server;
  let transport: UndiciTransport;
  let calls = 0;
  /** Answers are held until released, so concurrent requests really overlap. */
  let held: Array<() => void> = [];
  let holding = false;

  beforeAll(async () => {
    server = createServer((req, res) => {
      calls++;
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ path: req.url, call: calls }));
      };
      if (holding) held.push(answer);
      else answer();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    transport = new UndiciTransport({
      upstream: 't',
      title: 'the test upstream',
      baseUrl: `http://127.0.0.1:${port}`,
      connections: 8,
      keepAliveTimeoutMs: 1_000,
      connectTimeoutMs: 1_000,
      headersTimeoutMs: 5_000,
      bodyTimeoutMs: 5_000,
      maxResponseBytes: 1024 * 1024,
    });
  });
  afterAll(async () => {
    await transport.close();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    calls = 0;
    held = [];
    holding = false;
  });

  const build = () => {
    const registry = new Registry();
    const store = new MemoryResponseStore({ maxBytes: 1024 * 1024 });
    const options = {
      upstream: 't',
      routes: [route],
      store,
      settings: SETTINGS,
      events: new CacheMetrics(registry).forUpstream('t'),
    };
    const handler = compose([cacheStage(options)], transport.handler);
    const get = (id: string): Promise<ProxyResponse> =>
      settled(handler, {
        upstream: 't',
        route,
        method: 'GET',
        path: `/series/${id}`,
        query: [],
        headers: { accept: 'application/json' },
        consumerId: 'c',
        requestId: 'r',
        format: 'json',
        credentialId: 'token:t',
        deadline: Date.now() + 5_000,
        noCache: false,
        weight: 1,
      } satisfies ProxyRequest);
    return { get, close: () => store.close() };
  };

  const until = async (cond: () => boolean) => {
    while (!cond()) await new Promise((r) => setImmediate(r));
  };
  const bodyOf = (r: ProxyResponse) => (r.body as Buffer).toString();

  it('N identical GETs in flight make one upstream call and share its answer; the next one is a HIT', async () => {
    const t = build();
    holding = true;
    const all = Promise.all(Array.from({ length: 20 }, () => t.get('1')));
    await until(() => held.length === 1);
    // Let the other 19 reach the stage and join the call in flight before it is answered.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    held.forEach((answer) => answer());
    const res = await all;
    expect(calls).toBe(1);
    expect(new Set(res.map(bodyOf)).size).toBe(1);
    expect(res.filter((r) => r.cache === 'COALESCED')).toHaveLength(19);
    // Different keys are separate calls; the coalesced answer was stored.
    holding = false;
    await Promise.all([t.get('2'), t.get('3')]);
    expect(calls).toBe(3);
    expect((await t.get('1')).cache).toBe('HIT');
    expect(calls).toBe(3);
    await t.close();
  });

  it('MISS then HIT, stored by the stage itself', async () => {
    const t = build();
    const first = await t.get('7');
    expect(first.cache).toBe('MISS');
    const second = await t.get('7');
    expect(second.cache).toBe('HIT');
    expect(bodyOf(second)).toBe(bodyOf(first));
    expect(calls).toBe(1);
    await t.close();
  });
});
