import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, type HttpResult, withGateway } from '../helpers/gateway.js';
import { labsModule, withExtraUpstreams } from '../helpers/labs-interface.js';

const MACRO_TOKEN = 'sbx_macro_batch_secret_91c2';
const LABS_TOKEN = 'sbx_labs_batch_secret_77ad';

describe('POST /batch', () => {
  const both = testConsumer({ id: 'both', upstreams: new Set(['macro', 'labs']) });
  const macroOnly = testConsumer({ id: 'macro-only', upstreams: new Set(['macro']) });
  const macro = new FakeMacroUpstream({ token: MACRO_TOKEN });
  const labs = new FakeMacroUpstream({ token: LABS_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake: macro, token: MACRO_TOKEN } },
    servers: [labs],
    env: {
      UPSTREAM_MACRO_TIMEOUT_MS: '5000',
      ATRIUM_BATCH_MAX_ITEMS: '8',
      ATRIUM_BATCH_TIMEOUT_MS: '4000',
    },
    consumers: [both, macroOnly],
    imports: () => [labsModule(labs.url, LABS_TOKEN)],
    adjustConfig: withExtraUpstreams(() => ({ labs: { baseUrl: labs.url } })),
  });

  const batch = (key: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
    http(gw.url + '/batch', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary item bodies
  type Item = Record<string, any>;
  const byId = (res: HttpResult): Record<string, Item> =>
    Object.fromEntries((res.json().items as Item[]).map((i) => [i.id as string, i]));

  it('runs mixed items in parallel: per-item status, headers of note and body (or envelope)', async () => {
    const res = await batch(both.key, {
      requests: [
        { id: 'feeds', path: '/macro/feeds?limit=2' },
        { id: 'invalid', path: '/macro/feeds?limit=0' },
        { id: 'missing', path: '/macro/feeds/no-such-feed' },
        { id: 'xml', path: '/labs/layout/tables/TB1207?format=xml' },
        { id: 'lang', path: '/macro/layout/tables/TB1207', headers: { 'Accept-Language': 'zh-CN,zh;q=0.9' } },
        { id: 'unknown', path: '/nowhere/at/all' },
        { id: 'file', path: '/macro/series/1/visual' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body).toMatchObject({ total: 7, completed: 7, timedOut: false });
    const items = byId(res);
    expect((body.items as Item[]).map((i) => i.id)).toEqual([
      'feeds',
      'invalid',
      'missing',
      'xml',
      'lang',
      'unknown',
      'file',
    ]);

    expect(items.feeds).toMatchObject({
      status: 200,
      completed: true,
      route: 'macro.feeds.list',
      bodyEncoding: 'json',
    });
    expect(items.feeds.body.data).toHaveLength(2);
    expect(items.feeds.headers['content-type']).toMatch(/^application\/json/);
    expect(items.feeds.headers['x-request-id']).toMatch(/:0$/);

    // Validated before any upstream call, as a direct call would be.
    expect(items.invalid.status).toBe(400);
    expect(items.invalid.body.error).toMatchObject({ code: 'VALIDATION_FAILED', parameter: 'limit' });
    // The upstream's 404, normalised, with the macro prefix's vendor-shaped `errors` object beside `error`.
    expect(items.missing.status).toBe(404);
    expect(items.missing.body.error).toMatchObject({ code: 'NOT_FOUND', upstream: 'macro' });
    expect(items.missing.body.errors).toMatchObject({ status: 404 });

    expect(items.xml).toMatchObject({ status: 200, bodyEncoding: 'text', route: 'labs.layout.table' });
    expect(items.xml.body).toMatch(/^<\?xml/);
    expect(items.lang.status).toBe(200);
    expect(items.unknown).toMatchObject({ status: 404, completed: true });
    expect(items.unknown.body.error.code).toBe('NOT_FOUND');
    expect(items.file.status).toBe(400);
    expect(items.file.body.error).toMatchObject({ code: 'VALIDATION_FAILED', parameter: 'requests[6].path' });

    // Only the three items that reached an upstream were sent; with our keys, never the consumer's.
    expect(macro.requests.map((r) => r.path).sort()).toEqual(
      ['/v2/feeds', '/v2/layout/tables/TB1207', '/v2/feeds/no-such-feed'].sort(),
    );
    expect(labs.requests).toHaveLength(1);
    const langCall = macro.requests.find((r) => r.path.endsWith('/TB1207'))!;
    expect(langCall.headers['accept-language']).toBe('zh');
    for (const r of [...macro.requests, ...labs.requests]) {
      expect(r.url).not.toContain(both.key);
      expect(JSON.stringify(r.headers)).not.toContain(both.key);
    }
    expect(res.text).not.toContain(both.key);
    expect(res.text).not.toContain(MACRO_TOKEN);
  });

  it('reports cache outcomes per item: a repeat is served from the cache', async () => {
    const first = await batch(both.key, {
      requests: [{ id: 'a', path: '/macro/dictionary/units?x=batch-cache' }],
    });
    const second = await batch(both.key, {
      requests: [
        { id: 'again', path: '/macro/dictionary/units?x=batch-cache' },
        {
          id: 'fresh',
          path: '/macro/dictionary/units?x=batch-cache',
          headers: { 'cache-control': 'no-cache' },
        },
      ],
    });
    expect(byId(first).a.status).toBe(200);
    expect(byId(first).a.headers['x-cache']).toBe('MISS');
    const items = byId(second);
    expect(items.again.status).toBe(200);
    expect(items.again.headers['x-cache']).toBe('HIT');
    expect(items.again.headers.age).toMatch(/^\d+$/);
    expect(items.fresh.status).toBe(200);
    expect(items.again.body).toEqual(byId(first).a.body);
  });

  it('applies permissions per item: an interface the consumer may not use is a 403 for that item alone', async () => {
    const res = await batch(macroOnly.key, {
      requests: [
        { id: 'mine', path: '/macro/feeds?limit=1' },
        { id: 'theirs', path: '/labs/feeds?limit=1' },
      ],
    });
    expect(res.status).toBe(200);
    const items = byId(res);
    expect(items.mine.status).toBe(200);
    expect(items.theirs.status).toBe(403);
    expect(items.theirs.body.error.code).toBe('FORBIDDEN');
    expect(macro.requests).toHaveLength(1);
    expect(labs.requests).toHaveLength(0);
  });

  it('holds the overall deadline and says which items completed', async () => {
    labs.behave({ latencyMs: 6000 });
    const started = Date.now();
    const res = await batch(both.key, {
      timeoutMs: 400,
      requests: [
        { id: 'quick', path: '/macro/feeds?limit=1' },
        { id: 'slow', path: '/labs/feeds?limit=1' },
      ],
    });
    const elapsed = Date.now() - started;
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 2, completed: 1, timedOut: true, timeoutMs: 400 });
    const items = byId(res);
    expect(items.quick).toMatchObject({ completed: true, status: 200 });
    expect(items.slow).toMatchObject({ completed: false, status: 504, route: 'labs.feeds.list' });
    expect(items.slow.body.error).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
    // The slow upstream answers after 6 s (its 5 s deadline ends it first); the batch answered at its own.
    expect(elapsed).toBeLessThan(4000);
    expect(labs.requests).toHaveLength(1);
  });

  it('refuses writes: a non-GET item fails the whole call before any item runs', async () => {
    const res = await batch(both.key, {
      requests: [{ path: '/macro/feeds?limit=1' }, { method: 'POST', path: '/macro/userdefined/series' }],
    });
    expect(res.status).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'VALIDATION_FAILED', parameter: 'requests[1].method' });
    expect(res.json().error.message).toContain('only GET');
    expect(macro.requests).toHaveLength(0);
  });

  it.each([
    ['not JSON', 'body', '{"requests": ['],
    ['an empty body', 'body', ''],
    ['no requests', 'requests', {}],
    ['an empty list', 'requests', { requests: [] }],
    ['too many items', 'requests', { requests: Array.from({ length: 9 }, () => ({ path: '/macro/feeds' })) }],
    ['an unknown field', 'parallel', { requests: [{ path: '/macro/feeds' }], parallel: true }],
    ['an item without a path', 'requests[0].path', { requests: [{ id: 'x' }] }],
    ['a full URL', 'requests[0].path', { requests: [{ path: 'http://example.com/macro/feeds' }] }],
    [
      'a key header on an item',
      'requests[0].headers.authorization',
      { requests: [{ path: '/macro/feeds', headers: { authorization: 'x' } }] },
    ],
    [
      'duplicate ids',
      'requests[1].id',
      {
        requests: [
          { id: 'a', path: '/macro/feeds' },
          { id: 'a', path: '/macro/feeds' },
        ],
      },
    ],
    ['a deadline over the maximum', 'timeoutMs', { requests: [{ path: '/macro/feeds' }], timeoutMs: 999999 }],
  ])('%s → 400 VALIDATION_FAILED naming %s', async (_name, parameter, body) => {
    const res = await batch(both.key, body);
    expect(res.status).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'VALIDATION_FAILED', parameter });
    expect(macro.requests).toHaveLength(0);
  });

  it('needs a key; a wrong key runs nothing', async () => {
    const none = await batch(undefined, { requests: [{ path: '/macro/feeds' }] });
    expect(none.status).toBe(401);
    const wrong = await batch('atr_wrong_key_0000000000', { requests: [{ path: '/macro/feeds' }] });
    expect(wrong.status).toBe(401);
    expect(macro.requests).toHaveLength(0);
  });

  it('items run as the caller even when an item path carries another token', async () => {
    const res = await batch(macroOnly.key, {
      requests: [{ id: 'sneaky', path: `/labs/feeds?token=${both.key}` }],
    });
    expect(byId(res).sneaky.status).toBe(403);
    expect(labs.requests).toHaveLength(0);
  });
});
