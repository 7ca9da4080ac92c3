import { RouteMatcher } from '../../src/batch/route-matcher.js';
import type { RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { MACRO_ROUTES } from '../../src/upstreams/macro/macro.routes.js';

const docs: RouteDefinition[] = [
  { id: 'documents.search', method: 'GET', path: '/Search/query/', family: 'search' },
  { id: 'documents.file', method: 'GET', path: '/Search/getFile/', family: 'file', file: true },
  { id: 'documents.item', method: 'GET', path: '/Search/{id}/', family: 'search' },
  { id: 'documents.create', method: 'POST', path: '/Search/save/', family: 'search' },
];

describe('RouteMatcher (batch items and console errors to route ids)', () => {
  const m = new RouteMatcher([
    { name: 'macro', prefixes: ['macro'], routes: MACRO_ROUTES },
    { name: 'documents', prefixes: ['documents', 'news'], routes: docs },
  ]);

  it.each([
    ['/macro/feeds?limit=2', 'macro.feeds.list'],
    ['/macro/feeds/FD1', 'macro.feeds.get'],
    ['/macro/series/search', 'macro.series.search'],
    ['/macro/series/1%2C2/data', 'macro.series.data'],
    ['/macro//series/1/data/', 'macro.series.data'],
    ['/news/Search/query/?q=x', 'documents.search'],
    ['/documents/Search/query', 'documents.search'],
    ['/documents/Search/getFile/?id=1', 'documents.file'],
    ['/documents/Search/D1/', 'documents.item'],
  ])('%s → %s (a literal segment wins over a parameter)', (path, id) => {
    expect(m.match('GET', path)?.route?.id).toBe(id);
  });

  it('knows the upstream by prefix, aliases included', () => {
    expect(m.match('GET', '/news/Search/query/')?.upstream).toBe('documents');
    expect(m.upstreamOf('/news/anything')).toBe('documents');
    expect(m.upstreamOf('/health/ready')).toBeUndefined();
  });

  it('tells an unknown path from a path without that method', () => {
    expect(m.match('GET', '/macro/nope')).toBeUndefined();
    expect(m.match('GET', '/elsewhere/feeds')).toBeUndefined();
    const save = m.match('GET', '/documents/Search/save/');
    // `save` is also a value of the {id} parameter route, which takes GET.
    expect(save?.route?.id).toBe('documents.item');
    const post = m.match('POST', '/macro/userdefined/series');
    expect(post?.route?.id).toBe('macro.userdefined.create');
    expect(m.match('PUT', '/macro/feeds')).toMatchObject({
      route: undefined,
      methods: expect.arrayContaining(['GET', 'POST']),
    });
  });

  it('marks file routes', () => {
    expect(m.match('GET', '/macro/series/7/visual')?.route?.file).toBe(true);
  });
});
