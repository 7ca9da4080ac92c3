import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { AppModule } from '../../src/app.module.js';
import { loadConfig } from '../../src/config/atrium-config.js';
import { configureApp, createAdapter, NEST_APP_OPTIONS } from '../../src/configure-app.js';
import { overrideDefaultLogDestination } from '../../src/core/logging/log-destination.js';
import type { RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { FakeUpstream } from '../../src/sandbox/fake-upstream.js';
import { QueryTokenCredentials } from '../../src/upstreams/shared/static-token.credentials.js';
import { UPSTREAM_NAMES, UPSTREAMS } from '../../src/upstreams/index.js';
import { defineUpstream } from '../../src/upstreams/upstream-declaration.js';
import { testConsumer } from '../helpers/consumers.js';
import { http } from '../helpers/gateway.js';
import { captureDestination } from './log-capture.js';
import { parsePrometheusText, sum } from './prometheus-text.js';

/**
 * Metrics, logs and docs are built over whatever upstreams are declared. This stand-in is shaped
 * like the EMIS interfaces: two prefixes (an alias), the vendor's casing and trailing slashes, a
 * file route and a GET with a side effect; no line of the observability code knows it.
 */
const TOKEN = 'sbx_emis_generic_test_token_3c7d';
const ROUTES = [
  { id: 'stand.search.query', method: 'GET', path: '/Search/query/', family: 'search', cacheTtlMs: 60_000 },
  { id: 'stand.search.file', method: 'GET', path: '/Search/getFile/', family: 'search', file: true },
  { id: 'stand.usage.report', method: 'GET', path: '/Usage/report/', family: 'usage', sideEffect: true },
  { id: 'stand.items.get', method: 'GET', path: '/Items/{item_id}/', family: 'items', cacheTtlMs: 60_000 },
] as const satisfies readonly RouteDefinition[];

/** A fifth upstream, declared as data like the four: the gateway needs nothing else to serve it. */
const standUpstream = defineUpstream({
  name: 'stand',
  title: 'the stand-in service',
  prefixes: ['stand', 'alias'],
  routes: ROUTES,
  errorMapper: { read: () => ({}) },
  config: { credentials: 'token' },
  credentials: (u) => new QueryTokenCredentials('token', u.token!),
});
const upstreams = [...UPSTREAMS, standUpstream];

describe('observability over any registered upstream module', () => {
  const consumer = testConsumer({ id: 'stand-user', upstreams: new Set(['stand']) });
  const lines: string[] = [];
  let fake: FakeUpstream;
  let app: NestFastifyApplication;
  let url: string;

  beforeAll(async () => {
    fake = new FakeUpstream({
      kind: 'stand',
      handler: (req) =>
        req.path.includes('getFile')
          ? { status: 200, headers: { 'content-type': 'application/pdf' }, text: Buffer.from('%PDF-1.4') }
          : { json: { data: { path: req.path } } },
    });
    await fake.start();
    const capture = captureDestination();
    overrideDefaultLogDestination({
      write: (l: string) => {
        lines.push(l);
        capture.write(l);
      },
    });
    const env: Record<string, string> = { PORT: '0', HOST: '127.0.0.1' };
    for (const n of UPSTREAM_NAMES.map((name) => name.toUpperCase())) {
      env[`UPSTREAM_${n}_BASE_URL`] = 'http://127.0.0.1:9';
      env[`UPSTREAM_${n}_TOKEN`] = 'unused-test-token';
    }
    // The stand-in has its configuration namespace like a real upstream (budget, timeouts, limits).
    Object.assign(env, {
      UPSTREAM_STAND_BASE_URL: fake.url,
      UPSTREAM_STAND_TOKEN: TOKEN,
      UPSTREAM_STAND_CONNECTIONS: '4',
      UPSTREAM_STAND_TIMEOUT_MS: '2000',
      UPSTREAM_STAND_CONNECT_TIMEOUT_MS: '1000',
    });
    const config = loadConfig(env, upstreams);
    const mod = await Test.createTestingModule({
      imports: [AppModule.forRoot({ config, consumers: [consumer.consumer], upstreams })],
    }).compile();
    app = mod.createNestApplication<NestFastifyApplication>(createAdapter(config), {
      ...NEST_APP_OPTIONS,
      logger: false,
    });
    configureApp(app);
    await app.listen(0, '127.0.0.1');
    const address = app.getHttpServer().address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
    overrideDefaultLogDestination(captureDestination());
  });

  const get = (path: string) => http(url + path, { headers: { 'x-api-key': consumer.key } });

  it('documents its operations under both prefixes, in the vendor spelling, with aliases marked', async () => {
    const doc = (await http(`${url}/docs/json`)).json();
    expect(doc.tags.map((t: { name: string }) => t.name)).toContain('stand');
    const canonical = doc.paths['/stand/Search/query/'].get;
    expect(canonical).toMatchObject({ operationId: 'stand.search.query', tags: ['stand'] });
    const alias = doc.paths['/alias/Search/query/'].get;
    expect(alias).toMatchObject({
      operationId: 'alias.search.query',
      'x-atrium-alias-of': '/stand/Search/query/',
    });
    expect(doc.paths['/stand/Items/{item_id}/'].get.parameters).toEqual([
      expect.objectContaining({ name: 'item_id', in: 'path', required: true }),
    ]);
    expect(doc.paths['/stand/Search/getFile/'].get.responses['200'].content).toHaveProperty(
      'application/octet-stream',
    );
    expect(doc.paths['/stand/Usage/report/'].get.description).toMatch(/side effect/);
  });

  it('counts and logs its requests by route id under either prefix, never by raw path', async () => {
    expect((await get('/stand/Search/query/?term=x')).status).toBe(200);
    expect((await get('/alias/Search/query/?term=y')).status).toBe(200);
    expect((await get('/alias/Items/ITEM-7781/')).status).toBe(200);
    const file = await get('/stand/Search/getFile/?key=k');
    expect(file.status).toBe(200);
    expect(fake.requests.every((r) => r.url.includes(TOKEN) && !r.url.includes(consumer.key))).toBe(true);
    const text = (await http(`${url}/metrics`)).text;
    expect(text).not.toContain('ITEM-7781');
    const m = parsePrometheusText(text);
    expect(
      sum(m, 'atrium_requests_total', {
        upstream: 'stand',
        route: 'stand.search.query',
        status_class: '2xx',
      }),
    ).toBe(2);
    expect(sum(m, 'atrium_requests_total', { upstream: 'stand', route: 'stand.items.get' })).toBe(1);
    expect(sum(m, 'atrium_upstream_requests_total', { upstream: 'stand', route: 'stand.search.file' })).toBe(
      1,
    );
    expect(sum(m, 'atrium_consumer_requests_total', { consumer: 'stand-user', upstream: 'stand' })).toBe(4);
    const logged = lines
      .join('')
      .split('\n')
      .filter((l) => l.includes('"msg":"request"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.filter((l) => l.route === 'stand.search.query').map((l) => l.path)).toEqual([
      '/stand/Search/query/',
      '/alias/Search/query/',
    ]);
    expect(lines.join('')).not.toContain(consumer.key);
    expect(lines.join('')).not.toContain(TOKEN);
  });
});
