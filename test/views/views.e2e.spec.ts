import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ViewsRegistry } from '../../src/views/views.registry.js';
import { testConsumer } from '../helpers/consumers.js';
import { withGateway } from '../helpers/gateway.js';

const OPERATOR = `op_${randomBytes(24).toString('base64url')}`;
const dir = mkdtempSync(join(tmpdir(), 'atrium-views-'));
const file = join(dir, 'views.yaml');

const VIEWS = `
views:
  screen:
    description: Four parts over three interfaces, one chained across interfaces.
    params:
      id: { type: integer, required: true, example: 1000037 }
    parts:
      company:
        route: company.companies.get
        path: { id: '{{ params.id }}' }
      statements:
        route: /company/companies/{id}/statements
        path: { id: '{{ params.id }}' }
        query: { year: 2023, limit: 1 }
      documents:
        route: documents.search.query
        query: { term: '{{ parts.company.data.items[0].companyName }}', limit: 5 }
        optional: true
      deals:
        route: deals.deals.search
        query: { limit: 3, term: 'x{{ params.id }}' }
        optional: true
  deals-required:
    description: A required deals part.
    params:
      id: { type: integer, required: true, example: 1000037 }
    parts:
      company:
        route: company.companies.get
        path: { id: '{{ params.id }}' }
      deals:
        route: deals.deals.search
        query: { limit: 3, term: 'y{{ params.id }}' }
  slow:
    description: A required part and an optional one that may be slow.
    params:
      id: { type: integer, required: true, example: 1000037 }
      series: { type: string, example: '310112', pattern: '^[0-9]+$' }
    parts:
      company:
        route: company.companies.get
        path: { id: '{{ params.id }}' }
      series:
        route: macro.series.data
        path: { id: '{{ params.series }}' }
        optional: true
`;
writeFileSync(file, VIEWS);

describe('composite views', () => {
  const all = testConsumer({ id: 'views-all' });
  const noDeals = testConsumer({
    id: 'views-no-deals',
    upstreams: new Set(['macro', 'company', 'documents']),
  });
  const gw = withGateway({
    sandbox: true,
    consumers: [all, noDeals],
    env: {
      ATRIUM_VIEWS_FILE: file,
      ATRIUM_VIEWS_TIMEOUT_MS: '4000',
      UPSTREAM_DEALS_RETRY_ATTEMPTS: '1',
      ATRIUM_OPERATOR_TOKEN: OPERATOR,
    },
  });
  const get = (path: string, headers: Record<string, string> = {}) => gw.request(path, all.key, { headers });
  const fakes = () => [gw.sandbox.company, gw.sandbox.documents, gw.sandbox.deals, gw.sandbox.macro];
  /** Vendor calls seen (the documents fake's own login is not one). */
  const vendorCalls = () =>
    fakes().flatMap((f) => f.requests.filter((r) => !/\/Auth\//.test(r.path)).map((r) => r.url));

  beforeEach(() => {
    for (const f of fakes()) f.reset();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a 4-part view over 3 interfaces makes exactly 4 vendor calls; repeated, 0 (every part a HIT)', async () => {
    const first = await get('/views/screen?id=1000037');
    expect(first.status).toBe(200);
    expect(first.headers['x-atrium-complete']).toBe('true');
    const body = first.json();
    expect(body.complete).toBe(true);
    expect(Object.keys(body.data)).toEqual(['company', 'statements', 'documents', 'deals']);
    expect(body.data.company.data.items[0].companyId).toBe(1000037);
    for (const p of ['company', 'statements', 'documents', 'deals']) expect(body.parts[p].status).toBe(200);
    expect(vendorCalls()).toHaveLength(4);

    // The chained part got the value from the first part's answer (another interface's).
    const name = body.data.company.data.items[0].companyName as string;
    const search = gw.sandbox.documents.requests.find((r) => r.path.includes('Search/query'))!;
    expect(search.query).toContainEqual(['term', name]);

    for (const f of fakes()) f.reset();
    const again = await get('/views/screen?id=1000037');
    expect(again.status).toBe(200);
    const b2 = again.json();
    for (const p of ['company', 'statements', 'documents', 'deals']) expect(b2.parts[p].cache).toBe('HIT');
    expect(vendorCalls()).toHaveLength(0);
    // A view warms the cache for direct calls.
    const direct = await get('/company/companies/1000037');
    expect(direct.headers['x-cache']).toBe('HIT');
  });

  it('50 concurrent identical view calls make 4 vendor calls in all', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => get('/views/screen?id=1000074')));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    expect(vendorCalls()).toHaveLength(4);
    // Another id than the test before: each part's URL follows this call's parameters, not a remembered one.
    expect(answers[0].json().data.company.data.items[0].companyId).toBe(1000074);
  });

  it('a consumer without the deals interface gets parts.deals.status 403 and the rest', async () => {
    const res = await gw.request('/views/screen?id=1000111', noDeals.key);
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body.complete).toBe(false);
    expect(res.headers['x-atrium-complete']).toBe('false');
    expect(body.parts.deals.status).toBe(403);
    expect(body.parts.deals.error.code).toBe('FORBIDDEN');
    expect(body.data.deals).toBeNull();
    expect(body.parts.company.status).toBe(200);
    expect(body.data.company.data.items[0].companyId).toBe(1000111);
    expect(gw.sandbox.deals.requests.filter((r) => !/Auth/.test(r.path))).toHaveLength(0);
  });

  it('If-None-Match with the ETag gives 304; fields= on a view keeps only those paths', async () => {
    const first = await get('/views/screen?id=1000148');
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await get('/views/screen?id=1000148', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');

    const picked = await get('/views/screen?id=1000148&fields=company.data.items[].companyName');
    expect(picked.status).toBe(200);
    expect(picked.json().data).toEqual({
      company: { data: { items: [{ companyName: first.json().data.company.data.items[0].companyName }] } },
    });
    expect(picked.text.length).toBeLessThan(first.text.length);
    expect(picked.headers.etag).not.toBe(etag);
  });

  it('fields= on a proxied GET shrinks the body, is never forwarded, and leaves the cached entry whole', async () => {
    const small = await get('/company/companies/1000185?fields=data.items[].companyName');
    expect(small.status).toBe(200);
    expect(small.json()).toEqual({ data: { items: [{ companyName: expect.any(String) }] } });
    const call = gw.sandbox.company.requests.find((r) => r.path.endsWith('/companies/1000185'))!;
    expect(call.url).not.toContain('fields');
    const whole = await get('/company/companies/1000185');
    expect(whole.headers['x-cache']).toBe('HIT');
    expect(whole.json().data.items[0].companyId).toBe(1000185);
    expect(whole.text.length).toBeGreaterThan(small.text.length * 3);
    expect(gw.sandbox.company.requests.filter((r) => r.path.endsWith('/companies/1000185'))).toHaveLength(1);

    const bad = await get('/company/companies/1000185?fields=data..x');
    expect(bad.status).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'VALIDATION_FAILED', parameter: 'fields' });
    const badView = await get('/views/screen?id=1000185&fields=a[0]');
    expect(badView.status).toBe(400);
    expect(badView.json().error.parameter).toBe('fields');
  });

  it('validates view parameters before any part runs; unknown views are 404', async () => {
    const missing = await get('/views/screen');
    expect(missing.status).toBe(400);
    expect(missing.json().error.parameter).toBe('id');
    expect((await get('/views/screen?id=abc')).status).toBe(400);
    const unknown = await get('/views/screen?id=1&nope=1');
    expect(unknown.status).toBe(400);
    expect(unknown.json().error.parameter).toBe('nope');
    expect((await get('/views/no-such-view')).status).toBe(404);
    expect(vendorCalls()).toHaveLength(0);
    expect((await gw.request('/views/screen?id=1000037')).status).toBe(401);
  });

  it('GET /views lists every view with its parameters and one example URL', async () => {
    const res = await get('/views');
    expect(res.status).toBe(200);
    const screen = (res.json().views as Array<Record<string, unknown>>).find((v) => v.name === 'screen')!;
    expect(screen.exampleUrl).toBe('/views/screen?id=1000037');
    expect(screen.parameters).toEqual([{ name: 'id', type: 'integer', required: true, example: '1000037' }]);
  });

  it('the deadline gives a partial answer at once', async () => {
    gw.sandbox.macro.behave({ latencyMs: 3000 });
    const started = Date.now();
    const res = await get('/views/slow?id=1000222&series=310113&timeoutMs=300');
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body.complete).toBe(false);
    expect(body.parts.series.status).toBe(504);
    expect(body.parts.series.error.code).toBe('UPSTREAM_TIMEOUT');
    expect(body.parts.company.status).toBe(200);
    expect(took).toBeLessThan(2000);
  });

  it('counts per view in /metrics', async () => {
    await get('/views/screen?id=1000037');
    const text = (await gw.request('/metrics')).text;
    expect(text).toMatch(/atrium_view_requests_total\{view="screen",outcome="complete"\} [1-9]/);
    expect(text).toMatch(/atrium_view_parts_total\{view="screen",part="company",result="HIT"\} [1-9]/);
  });

  it('the operator console shows the views with their request counts and partial answers', async () => {
    await gw.request('/views/screen?id=1000370', noDeals.key);
    const res = await gw.request('/console/api/state', undefined, {
      headers: { 'x-operator-token': OPERATOR },
    });
    expect(res.status).toBe(200);
    const views = res.json().views as Array<Record<string, unknown>>;
    expect(views.map((v) => v.name)).toEqual(['screen', 'deals-required', 'slow']);
    const screen = views.find((v) => v.name === 'screen')!;
    expect(screen).toMatchObject({ parts: 4, exampleUrl: '/views/screen?id=1000037' });
    expect(screen.requests).toBeGreaterThanOrEqual(7);
    expect(screen.partial).toBeGreaterThanOrEqual(2);
    expect(screen.notModified).toBe(1);
    expect((screen.complete as number) + (screen.partial as number) + (screen.notModified as number)).toBe(
      screen.requests,
    );
  });

  it('SIGHUP reloads the file; an invalid file keeps the previous set in force', async () => {
    const registry = gw.app.get(ViewsRegistry);
    writeFileSync(file, VIEWS.replace('route: deals.deals.search', 'route: deals.deals.nope'));
    process.emit('SIGHUP', 'SIGHUP');
    expect(registry.get('screen')).toBeDefined();
    expect((await get('/views/screen?id=1000037')).status).toBe(200);
    writeFileSync(file, VIEWS.replace('  slow:', '  slow-renamed:'));
    process.emit('SIGHUP', 'SIGHUP');
    expect(registry.get('slow')).toBeUndefined();
    expect(registry.get('slow-renamed')).toBeDefined();
    writeFileSync(file, VIEWS);
    expect(registry.reload()).toBe(true);
  });

  // Last: they leave the deals interface in its 429 cooldown.
  it('a vendor 429 on an optional part gives complete: false, and the cooldown holds (no second vendor call)', async () => {
    gw.sandbox.deals.behave({
      failWith: { status: 429, headers: { 'retry-after': '120' } },
    });
    const first = await get('/views/screen?id=1000259');
    expect(first.status).toBe(200);
    expect(first.json().complete).toBe(false);
    expect(first.json().parts.deals.status).toBe(429);
    const dealCalls = () => gw.sandbox.deals.requests.filter((r) => !/Auth/.test(r.path)).length;
    expect(dealCalls()).toBe(1);
    const second = await get('/views/screen?id=1000296');
    expect(second.json().parts.deals.status).toBe(429);
    expect(dealCalls()).toBe(1);
  });

  it('a 429 on a required part answers 429 with Retry-After, naming the part', async () => {
    const res = await get('/views/deals-required?id=1000333');
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers['x-atrium-complete']).toBe('false');
    const body = res.json();
    expect(body.error).toMatchObject({
      code: 'UPSTREAM_RATE_LIMITED',
      part: 'deals',
      view: 'deals-required',
    });
    expect(body.parts.company.status).toBe(200);
  });
});
