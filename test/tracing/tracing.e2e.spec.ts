import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http, withGateway } from '../helpers/gateway.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const UPSTREAM_TOKEN = 'sbx_macro_tracing_secret_3f90';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;
const hex = (n: number) =>
  Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');

// A spawned gateway (node dist/main.js): the OTLP exporter loads `http` with a dynamic import, which Jest's
// module sandbox cannot run; the real process is what production runs anyway.
describe('traces exported over OTLP/HTTP', () => {
  const app = testConsumer({ id: 'traced-app', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const receiver = new OtlpReceiver();
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    servers: [receiver],
    env: () => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'atrium-under-test',
      // Macro only: the batch test's company item is an interface not served.
      ATRIUM_UPSTREAMS: 'macro',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,team=data%20apps,service.name=ignored',
      UPSTREAM_MACRO_RETRY_ATTEMPTS: '2',
      UPSTREAM_MACRO_RETRY_BASE_MS: '10',
      UPSTREAM_MACRO_RETRY_MAX_BACKOFF_MS: '20',
      UPSTREAM_MACRO_BREAKER_MIN_SAMPLE: '1000',
    }),
    consumers: [app],
    mode: 'process',
  });

  it("the consumer's trace: request, cache lookup, budget wait and each vendor attempt, and the vendor sees the same trace", async () => {
    const traceId = hex(32);
    const parent = hex(16);
    // The first attempt fails (503), the retry succeeds: two vendor-call spans.
    fake.behave({ failWith: { status: 503, times: 1 } });
    const res = await http(gw.url + '/macro/layout/tables/TB1207', {
      headers: {
        authorization: `Bearer ${app.key}`,
        traceparent: `00-${traceId}-${parent}-01`,
        tracestate: 'vendor=abc',
      },
    });
    expect(res.status).toBe(200);
    expect(fake.requests).toHaveLength(2);
    const sent = fake.requests.map((r) => TRACEPARENT.exec(String(r.headers.traceparent)));
    expect(sent.every((m) => m?.[1] === traceId)).toBe(true);
    expect(fake.requests[0].headers.tracestate).toBe('vendor=abc');

    const spans = await eventually(
      () => {
        const mine = receiver.spans.filter((s) => s.traceId === traceId);
        return mine.filter((s) => s.name === 'vendor call').length === 2 &&
          mine.some((s) => s.parentSpanId === parent)
          ? mine
          : undefined;
      },
      { what: 'spans exported' },
    );
    const server = spans.find((s) => s.parentSpanId === parent)!;
    expect(server).toMatchObject({ name: 'GET macro.layout.table', service: 'atrium-under-test' });
    // OTEL_RESOURCE_ATTRIBUTES honoured (OTEL_SERVICE_NAME wins for service.name), and an id per replica.
    expect(server.resource).toMatchObject({ 'deployment.environment': 'test', team: 'data apps' });
    expect(server.resource['service.instance.id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.attributes).toMatchObject({
      'http.response.status_code': 200,
      'atrium.consumer': 'traced-app',
    });
    const children = spans.filter((s) => s.parentSpanId === server.spanId).map((s) => s.name);
    expect(children.sort()).toEqual([
      'cache lookup',
      'upstream budget',
      'upstream budget',
      'vendor call',
      'vendor call',
    ]);
    // Each attempt's traceparent names its own span as the parent.
    const attempts = spans.filter((s) => s.name === 'vendor call');
    expect(sent.map((m) => m?.[2]).sort()).toEqual(attempts.map((s) => s.spanId).sort());
    expect(attempts.map((s) => s.attributes['http.response.status_code']).sort()).toEqual([200, 503]);
  });

  /** This trace's spans once `ready` says all are in. */
  const spansOf = (traceId: string, ready: (mine: ReceivedSpan[]) => boolean) =>
    eventually(
      () => {
        const mine = receiver.spans.filter((s) => s.traceId === traceId);
        return ready(mine) ? mine : undefined;
      },
      { what: 'spans exported' },
    );
  /** The parent span id in the traceparent each vendor request carried (of this trace only). */
  const vendorParents = (traceId: string) =>
    fake.requests
      .map((r) => TRACEPARENT.exec(String(r.headers.traceparent)))
      .filter((m) => m?.[1] === traceId)
      .map((m) => m![2]);

  it('each batch item gets its own span under the request, and its vendor call carries that span', async () => {
    const traceId = hex(32);
    const parent = hex(16);
    const res = await http(gw.url + '/batch', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${app.key}`,
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${parent}-01`,
      },
      body: JSON.stringify({
        requests: [
          { id: 'feeds', path: '/macro/feeds?limit=3' },
          { id: 'meta', path: '/macro/series/310902320/metadata' },
          { id: 'company', path: '/company/companies/1' },
        ],
      }),
    });
    expect(res.status).toBe(200);
    expect(res.json().items.map((i: { status: number }) => i.status)).toEqual([200, 200, 404]);
    const spans = await spansOf(
      traceId,
      (mine) =>
        mine.filter((s) => s.name === 'batch item').length === 3 &&
        mine.filter((s) => s.name === 'vendor call').length === 2 &&
        mine.some((s) => s.parentSpanId === parent),
    );
    const server = spans.find((s) => s.parentSpanId === parent)!;
    expect(server.name).toBe('POST /batch');
    const items = spans.filter((s) => s.name === 'batch item');
    expect(items.every((s) => s.parentSpanId === server.spanId)).toBe(true);
    const byItem = Object.fromEntries(items.map((s) => [s.attributes['atrium.batch.item'], s]));
    expect(byItem.feeds.attributes).toMatchObject({
      'atrium.route': 'macro.feeds.list',
      'atrium.batch.index': 0,
      'http.response.status_code': 200,
    });
    expect(byItem.meta.attributes).toMatchObject({ 'http.response.status_code': 200 });
    expect(byItem.company.attributes).toMatchObject({
      'http.response.status_code': 404,
      'atrium.error_code': 'UPSTREAM_NOT_CONFIGURED',
    });
    expect(byItem.company.status).toMatchObject({ code: 2, message: 'UPSTREAM_NOT_CONFIGURED' });
    // Each vendor call is a child of its item's span, and the vendor saw that call's span as its parent.
    const calls = spans.filter((s) => s.name === 'vendor call');
    expect(calls.map((s) => s.parentSpanId).sort()).toEqual([byItem.feeds.spanId, byItem.meta.spanId].sort());
    expect(vendorParents(traceId).sort()).toEqual(calls.map((s) => s.spanId).sort());
  });

  it('each view part gets its own span under the request, and its vendor call carries that span', async () => {
    const traceId = hex(32);
    const parent = hex(16);
    const res = await http(gw.url + '/views/series-overview?id=310112', {
      headers: { authorization: `Bearer ${app.key}`, traceparent: `00-${traceId}-${parent}-01` },
    });
    expect(res.status).toBe(200);
    const spans = await spansOf(
      traceId,
      (mine) =>
        mine.filter((s) => s.name === 'view part').length === 3 &&
        mine.filter((s) => s.name === 'vendor call').length === 3 &&
        mine.some((s) => s.parentSpanId === parent),
    );
    const server = spans.find((s) => s.parentSpanId === parent)!;
    const parts = spans.filter((s) => s.name === 'view part');
    expect(parts.every((s) => s.parentSpanId === server.spanId)).toBe(true);
    expect(
      Object.fromEntries(parts.map((s) => [s.attributes['atrium.view.part'], s.attributes['atrium.route']])),
    ).toEqual({
      data: 'macro.series.data',
      metadata: 'macro.series.metadata',
      releases: 'macro.releases.series',
    });
    for (const p of parts)
      expect(p.attributes).toMatchObject({
        'atrium.view': 'series-overview',
        'atrium.upstream': 'macro',
        'http.response.status_code': 200,
      });
    const calls = spans.filter((s) => s.name === 'vendor call');
    expect(calls.map((s) => s.parentSpanId).sort()).toEqual(parts.map((s) => s.spanId).sort());
    expect(vendorParents(traceId).sort()).toEqual(calls.map((s) => s.spanId).sort());
  });

  it('puts the trace id in the error envelope beside requestId', async () => {
    const traceId = hex(32);
    const res = await http(gw.url + '/macro/layout/tables/TB1207', {
      headers: { authorization: 'Bearer atr_not_a_key', traceparent: `00-${traceId}-${hex(16)}-01` },
    });
    expect(res.status).toBe(401);
    expect(res.json().error).toMatchObject({ code: 'UNAUTHENTICATED', traceId });
  });
});

describe('traces without an exporter (propagation only)', () => {
  const app = testConsumer({ id: 'untraced-app', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({ upstreams: { macro: { fake, token: UPSTREAM_TOKEN } }, consumers: [app] });

  it("passes the consumer's trace on, or starts one, and names it in errors", async () => {
    const traceId = hex(32);
    await http(gw.url + '/macro/layout/tables/TB1207?lang=zh', {
      headers: { authorization: `Bearer ${app.key}`, traceparent: `00-${traceId}-${hex(16)}-01` },
    });
    expect(TRACEPARENT.exec(String(fake.requests[0].headers.traceparent))?.[1]).toBe(traceId);
    expect(fake.requests[0].headers.tracestate).toBeUndefined();

    await http(gw.url + '/macro/layout/tables/TB1207?lang=ru', {
      headers: { authorization: `Bearer ${app.key}`, traceparent: 'garbage' },
    });
    const started = TRACEPARENT.exec(String(fake.requests[1].headers.traceparent));
    expect(started?.[1]).toBeDefined();
    expect(started?.[1]).not.toBe(traceId);

    const err = await http(gw.url + '/macro/layout/tables/TB1207?lang=xx', {
      headers: { authorization: `Bearer ${app.key}` },
    });
    expect(err.status).toBe(400);
    expect(err.json().error.traceId).toMatch(/^[0-9a-f]{32}$/);
  });
});
