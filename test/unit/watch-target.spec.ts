import { RouteMatcher } from '../../src/batch/route-matcher.js';
import { GatewayError } from '../../src/core/errors/gateway-error.js';
import type { RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { MACRO_ROUTES } from '../../src/upstreams/macro/macro.routes.js';
import { pathPiecesOf, type ViewDefinition } from '../../src/views/view-definition.js';
import { parseTemplate } from '../../src/views/view-template.js';
import { etagOf } from '../../src/core/http/etag.js';
import { sseEvent, watchAnswer } from '../../src/watch/watch-answer.js';
import { resolveTarget, type TargetContext } from '../../src/watch/watch-target.js';

const docs: RouteDefinition[] = [
  { id: 'documents.item', method: 'GET', path: '/Search/{id}/', family: 'search', cacheTtlMs: 60_000 },
];
const series = MACRO_ROUTES.find((r) => r.id === 'macro.series.data')!;
const visual = MACRO_ROUTES.find((r) => r.id === 'macro.series.visual')!;
const view = (name: string, routes: RouteDefinition[]): ViewDefinition =>
  ({
    name,
    parts: routes.map((route, i) => ({ name: `p${i}`, upstream: 'macro', route })),
  }) as unknown as ViewDefinition;
const views = new Map([
  ['pair', view('pair', [series, visual])],
  ['files', view('files', [visual])],
]);
const upstreamOf = (r: RouteDefinition) => (docs.includes(r) ? 'documents' : 'macro');
const ctx = (ttlOverrides: Record<string, number> = {}, minIntervalMs = 1000): TargetContext => ({
  matcher: new RouteMatcher([
    { name: 'macro', prefixes: ['macro'], routes: MACRO_ROUTES },
    { name: 'documents', prefixes: ['documents'], routes: docs },
  ]),
  view: (n) => views.get(n),
  upstreamOf,
  ttlOverrides,
  minIntervalMs,
});
const refusal = (path: string, c = ctx()): GatewayError => {
  try {
    resolveTarget(path, c);
  } catch (e) {
    return e as GatewayError;
  }
  throw new Error(`${path} was not refused`);
};

describe('watched paths (src/watch/watch-target.ts)', () => {
  it('a cached route: its canonical path and query are the resource, its TTL the interval', () => {
    const t = resolveTarget('/macro//series/1%2C2/data?fields=data&b=1', ctx());
    expect(t).toMatchObject({
      kind: 'route',
      key: '/macro/series/1%2C2/data?fields=data&b=1',
      params: { id: '1,2' },
      query: [
        ['fields', 'data'],
        ['b', '1'],
      ],
      intervalMs: series.cacheTtlMs,
    });
    expect(resolveTarget('/documents/Search/D1', ctx())).toMatchObject({ key: '/documents/Search/D1/' });
  });

  it('the interval follows TTL overrides, never under the floor', () => {
    expect(resolveTarget('/macro/series/1/data', ctx({ series: 300 }, 50)).intervalMs).toBe(300);
    expect(resolveTarget('/macro/series/1/data', ctx({ 'macro.series': 10 }, 50)).intervalMs).toBe(50);
  });

  it('a view: its shortest cached part sets the interval; one with no cached part is refused', () => {
    expect(resolveTarget('/views/pair?id=1&fields=p0', ctx({ series: 2000 }))).toMatchObject({
      kind: 'view',
      key: '/views/pair?id=1&fields=p0',
      intervalMs: 2000,
    });
    expect(refusal('/views/files').code).toBe('VALIDATION_FAILED');
    expect(refusal('/views/nope').code).toBe('NOT_FOUND');
  });

  it('a view’s parts: the path parameters its own parameters give them (not those read from another part)', () => {
    const metadata = MACRO_ROUTES.find((r) => r.id === 'macro.series.metadata')!;
    const overview = {
      name: 'overview',
      params: [{ name: 'id', type: 'string', required: true }],
      parts: [
        {
          name: 'data',
          upstream: 'macro',
          route: series,
          pathPieces: pathPiecesOf(series.path),
          path: { id: parseTemplate('{{ params.id }}') },
          query: [],
        },
        {
          name: 'next',
          upstream: 'macro',
          route: metadata,
          pathPieces: pathPiecesOf(metadata.path),
          path: { id: parseTemplate('{{ parts.data.data[0].entityId }}') },
          query: [],
        },
        {
          name: 'chart',
          upstream: 'macro',
          route: visual,
          pathPieces: pathPiecesOf(visual.path),
          path: { id: parseTemplate('{{ params.id }}') },
          query: [],
        },
      ],
    } as unknown as ViewDefinition;
    const c = { ...ctx({ series: 2000 }), view: () => overview };
    const t = resolveTarget('/views/overview?id=42,43', c);
    expect(t).toMatchObject({ kind: 'view', intervalMs: 2000 });
    // The chart is never cached: no part of the view's timing.
    expect(t.kind === 'view' && t.parts).toEqual([
      { name: 'data', upstream: 'macro', route: series, params: { id: '42,43' }, intervalMs: 2000 },
      { name: 'next', upstream: 'macro', route: metadata, intervalMs: 2000 },
    ]);
    // A query the view refuses: no parameters known (the first read says why).
    const bad = resolveTarget('/views/overview?nope=1', c);
    expect(bad.kind === 'view' && bad.parts.map((p) => p.params)).toEqual([undefined, undefined]);
  });

  it.each([
    ['/macro/series/1/visual', 'VALIDATION_FAILED', {}],
    ['/macro/series/1/data', 'VALIDATION_FAILED', { series: 0 }],
    ['/unknown/x', 'NOT_FOUND', {}],
    ['macro/series/1/data', 'VALIDATION_FAILED', {}],
    ['/macro/series/%2e%2e/data', 'VALIDATION_FAILED', {}],
    ['/macro/series/1%2F2/data', 'VALIDATION_FAILED', {}],
  ] as Array<[string, string, Record<string, number>]>)('%s is refused: %s', (path, code, overrides) => {
    expect(refusal(path, ctx(overrides)).code).toBe(code);
  });
});

describe('watch events (src/watch/watch-answer.ts)', () => {
  it('a strong ETag of the bytes; JSON sent on one line whatever the vendor’s layout', () => {
    const body = Buffer.from('{\n  "data": [1,\n 2]\n}');
    const a = watchAnswer(body, 'application/json');
    expect(a.etag).toBe(etagOf(body));
    expect(a.etag).toMatch(/^"[\w-]{32}"$/);
    expect(JSON.parse(`{${a.members}}`)).toEqual({
      etag: a.etag,
      status: 200,
      bodyEncoding: 'json',
      body: { data: [1, 2] },
    });
    const e = sseEvent('answer', `{${a.members}}`, a.etag);
    expect(e.split('\n')).toEqual([`event: answer`, `id: ${a.etag}`, `data: {${a.members}}`, '', '']);
  });
});
