import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { cleanEnv, http, type SpawnedGateway, spawnGateway, writeConsumersFile } from '../helpers/gateway.js';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * A deployment that licenses only the macroeconomic interface: `node dist/main.js` with only
 * UPSTREAM_MACRO_* set (no ATRIUM_UPSTREAMS: the interfaces with a base URL are served). Macro is served
 * against its fake; every path of the three others answers 404 UPSTREAM_NOT_CONFIGURED without reaching
 * anything, /docs marks them, views say what they miss, readiness is that of a macro-only gateway.
 */
describe('a gateway serving only the macroeconomic interface', () => {
  const TOKEN = 'sbx_macro_only_4f1e0c2b';
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const app = testConsumer({ id: 'macro-only-app' });
  const dir = mkdtempSync(join(tmpdir(), 'atrium-some-'));
  let gw: SpawnedGateway;
  const get = (path: string) => http(gw.url + path, { headers: { authorization: `Bearer ${app.key}` } });
  /** The shipped views and one whose optional part reads the company interface. */
  const viewsFile = () => {
    const path = join(dir, 'views.yaml');
    const extra = [
      '  series-with-company:',
      '    description: A series and, optionally, a company.',
      '    params:',
      "      id: { type: string, required: true, example: '310902320' }",
      '    parts:',
      '      series:',
      '        route: /macro/series/{id}/metadata',
      "        path: { id: '{{ params.id }}' }",
      '      company:',
      '        route: company.companies.get',
      "        path: { id: '{{ params.id }}' }",
      '        optional: true',
    ].join('\n');
    writeFileSync(path, `${readFileSync(resolve(__dirname, '../../config/views.yaml'), 'utf8')}\n${extra}\n`);
    return path;
  };

  beforeAll(async () => {
    await fake.start();
    gw = await spawnGateway(
      cleanEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        UPSTREAM_MACRO_BASE_URL: fake.url,
        UPSTREAM_MACRO_TOKEN: TOKEN,
        ATRIUM_CONSUMERS_FILE: writeConsumersFile(dir, [app.consumer]),
        ATRIUM_VIEWS_FILE: viewsFile(),
      }),
      40_000,
    );
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves macro as before: the call reaches the vendor with the key the gateway holds', async () => {
    const res = await get('/macro/series/310902320/data');
    expect(res.status).toBe(200);
    expect(fake.requests.some((r) => r.path.includes('/series/310902320/data'))).toBe(true);
    expect((await get('/macro/feeds?limit=1')).status).toBe(200);
  });

  it.each([
    ['/company/companies/123', 'company'],
    ['/documents/Search/query?q=x', 'documents'],
    ['/news/Search/query?q=x', 'documents'],
    ['/deals/deals/search', 'deals'],
    ['/dw/deals/search', 'deals'],
    ['/company', 'company'],
  ])('%s answers 404 UPSTREAM_NOT_CONFIGURED naming the %s interface', async (path, upstream) => {
    const res = await get(path);
    expect(res.status).toBe(404);
    const { error } = res.json();
    expect(error).toMatchObject({ code: 'UPSTREAM_NOT_CONFIGURED', status: 404, retryable: false, upstream });
    expect(error.message).toMatch(/does not serve/);
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('refuses writes and unauthenticated calls the same way (nothing behind the prefix)', async () => {
    expect(
      (await http(`${gw.url}/deals/deals/search`, { method: 'POST', body: '{}' })).json().error.code,
    ).toBe('UPSTREAM_NOT_CONFIGURED');
  });

  it('readiness is unaffected: ready, and only macro is probed', async () => {
    const res = await http(`${gw.url}/health/ready`);
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body.ready).toBe(true);
    expect(body.upstreams.map((u: { name: string }) => u.name)).toEqual(['macro']);
  });

  it('/docs keeps the routes of the other interfaces, marked as not served', async () => {
    const doc = (await http(`${gw.url}/docs/json`)).json();
    const company = doc.paths['/company/companies/{id}'].get;
    expect(company['x-atrium-not-served']).toBe(true);
    expect(company.description).toMatch(/Not served by this deployment/);
    expect(doc.paths['/macro/series/{id}/data'].get['x-atrium-not-served']).toBeUndefined();
    expect(doc.tags.find((t: { name: string }) => t.name === 'company')['x-atrium-not-served']).toBe(true);
  });

  it('a view whose required part needs an interface not served fails on that part, in the usual form, calling nothing', async () => {
    const before = fake.requests.length;
    const company = await get('/views/company-overview?id=123');
    expect(company.status).toBe(404);
    const body = company.json();
    expect(body.error).toMatchObject({
      code: 'UPSTREAM_NOT_CONFIGURED',
      upstream: 'company',
      view: 'company-overview',
      part: 'company',
    });
    expect(body.error.message).toMatch(
      /^Part "company": Not run: this deployment does not serve the company/,
    );
    // Every part reported, none run: the view cannot answer without its required part.
    expect(Object.keys(body.parts)).toEqual(['company', 'statement', 'financials', 'documents', 'deals']);
    for (const p of Object.values<{ status: number; error: { code: string } }>(body.parts))
      expect(p).toMatchObject({ status: 404, error: { code: 'UPSTREAM_NOT_CONFIGURED' } });
    expect(fake.requests.length).toBe(before);
  });

  it('a view whose optional part needs an interface not served answers without it, naming the code', async () => {
    const res = await get('/views/series-with-company?id=310902320');
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body.complete).toBe(false);
    expect(body.data.company).toBeNull();
    expect(body.parts.series.status).toBe(200);
    expect(body.parts.company).toMatchObject({
      status: 404,
      error: { code: 'UPSTREAM_NOT_CONFIGURED', upstream: 'company' },
    });
    expect((await get('/views/series-overview?id=310902320')).status).toBe(200);
  });

  it('a batch item for an interface not served answers as the direct call does (404 UPSTREAM_NOT_CONFIGURED)', async () => {
    const res = await http(gw.url + '/batch', {
      method: 'POST',
      headers: { authorization: `Bearer ${app.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: [
          { id: 'macro', path: '/macro/feeds?limit=1' },
          { id: 'company', path: '/company/companies/123' },
          { id: 'news', path: '/news/Search/query?q=x' },
          { id: 'deals-unknown-path', path: '/dw/no/such/route' },
        ],
      }),
    });
    expect(res.status).toBe(200);
    const items = res.json().items as Array<{ id: string; status: number; body: { error?: object } }>;
    expect(items.map((i) => [i.id, i.status])).toEqual([
      ['macro', 200],
      ['company', 404],
      ['news', 404],
      ['deals-unknown-path', 404],
    ]);
    const direct = (await get('/company/companies/123')).json().error;
    expect(items[1].body.error).toMatchObject({
      code: 'UPSTREAM_NOT_CONFIGURED',
      upstream: 'company',
      message: direct.message,
    });
    expect(items[2].body.error).toMatchObject({ code: 'UPSTREAM_NOT_CONFIGURED', upstream: 'documents' });
    expect(items[3].body.error).toMatchObject({ code: 'UPSTREAM_NOT_CONFIGURED', upstream: 'deals' });
  });
});

describe('an interface listed in ATRIUM_UPSTREAMS without its settings', () => {
  it('stops the boot naming the variables, and the sandbox does not fill the gap', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'atrium-some-'));
    try {
      const env = cleanEnv({
        PORT: '0',
        ATRIUM_UPSTREAMS: 'macro,company',
        UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9',
        UPSTREAM_MACRO_TOKEN: 'sbx_macro_listed_0a1b2c',
        ATRIUM_CONSUMERS_FILE: writeConsumersFile(dir, []),
      });
      const child = spawn(process.execPath, ['dist/main.js'], {
        cwd: resolve(__dirname, '../..'),
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((res) => child.once('exit', res));
      expect(code).toBe(1);
      expect(out).toMatch(/UPSTREAM_COMPANY_BASE_URL \(not set: ATRIUM_UPSTREAMS lists company/);
      expect(out).not.toMatch(/SANDBOX MODE/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
