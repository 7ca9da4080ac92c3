import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import ts from 'typescript';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { withGateway } from '../helpers/gateway.js';
import { describeNeeding } from '../helpers/system-parts.js';
import { launchChromium, textWhen } from '../helpers/chromium.js';

const ROOT = resolve(__dirname, '../..');
const TOKEN = 'sbx_macro_watch_page_secret_71f3';
const HEADING = '### A page that watches a series and a view';

/** The page and the view as docs/frontend.md shows them: the first yaml and html blocks of its section. */
function fromDocs(): { page: string; view: string } {
  const md = readFileSync(join(ROOT, 'docs/frontend.md'), 'utf8');
  const section = md.slice(md.indexOf(HEADING));
  const block = (lang: string) => {
    const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(section);
    if (!m) throw new Error(`docs/frontend.md "${HEADING}" has no ${lang} block`);
    return m[1];
  };
  return { page: block('html'), view: block('yaml') };
}

/** The client's own dependencies, resolved to their ES module as a front end's bundler would. */
const BARE_IMPORTS: Record<string, string> = {
  'openapi-fetch': 'node_modules/openapi-fetch/dist/index.mjs',
};

/**
 * The page's origin: the docs page (its gateway address set to the test's) and the typed client (client/),
 * each file compiled from TypeScript to an ES module, its package imports resolved, as a front end's build would.
 */
async function pageServer(page: () => string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page());
      return;
    }
    const dep = Object.entries(BARE_IMPORTS).find(([name]) => path === `/deps/${name}.js`);
    if (dep) {
      const js = readFileSync(join(ROOT, dep[1]), 'utf8');
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(js);
      return;
    }
    const m = /^\/client\/([\w/-]+)\.js$/.exec(path);
    if (!m || m[1].includes('..')) {
      res.writeHead(404).end();
      return;
    }
    const source = readFileSync(join(ROOT, 'client', `${m[1]}.ts`), 'utf8');
    const js = ts
      .transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      })
      .outputText.replace(/from (['"])([^'"./][^'"]*)\1/g, (whole: string, _q: string, name: string) =>
        name in BARE_IMPORTS ? `from '/deps/${name}.js'` : whole,
      );
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(js);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * The page of docs/frontend.md in real headless Chromium: it watches a user-defined series and a view over
 * it with the typed client's watch(); a time point added at the sandbox's fake vendor reaches both on the
 * page, without a reload.
 */
describeNeeding('chromium', 'a page that watches (docs/frontend.md) in headless Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-watch-page-'));
  const docs = fromDocs();
  const viewsFile = join(dir, 'views.yaml');
  writeFileSync(viewsFile, `views:\n${docs.view}\n`);
  let browser: Browser;
  let site: Awaited<ReturnType<typeof pageServer>>;
  let html = '';
  let web: ReturnType<typeof testConsumer>;
  // The page's origin exists before the gateway: the consumer allows it (CORS).
  beforeAll(async () => {
    site = await pageServer(() => html);
    web = testConsumer({ id: 'watch-page', upstreams: new Set(['macro']), corsOrigins: [site.origin] });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => site?.server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: TOKEN } },
    consumers: () => [web],
    env: {
      ATRIUM_VIEWS_FILE: viewsFile,
      ATRIUM_CACHE_TTL_OVERRIDES: 'userdefined=300ms',
      ATRIUM_WATCH_MIN_INTERVAL_MS: '50',
    },
  });

  it('shows the current answers, then a time point added at the vendor, in the series and in the view', async () => {
    html = docs.page.replace('data-gateway="https://atrium.internal"', `data-gateway="${gw.url}"`);
    expect(html).toContain(gw.url);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.addInitScript((key) => sessionStorage.setItem('gatewayKey', key), web.key);
      await page.goto(site.origin + '/');
      // The sandbox's user-defined series UD-1 has twelve points; the page shows its latest.
      const series = await textWhen(page.locator('#series'), /on \d{4}-\d\d-\d\d/);
      expect(series).toMatch(/^-?[\d.]+ on \d{4}-\d\d-\d\d$/);
      expect(await textWhen(page.locator('#view'), (t) => t === series)).toBe(series);

      // A figure lands at the vendor (written there directly: the gateway hears of it only by polling).
      const added = await fetch(`${fake.url}/userdefined/series/UD-1/timepoints?token=${TOKEN}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ timepoints: [{ date: '2031-12-31', value: 4321.5 }] }),
      });
      expect(added.status).toBe(200);
      expect(await textWhen(page.locator('#series'), /^4321\.5 on 2031-12-31$/, 15_000)).toBe(
        '4321.5 on 2031-12-31',
      );
      expect(await textWhen(page.locator('#view'), /^4321\.5 on 2031-12-31$/, 15_000)).toBe(
        '4321.5 on 2031-12-31',
      );
      expect(await page.locator('#problems').textContent()).toBe('');
      expect(errors).toEqual([]);
      // The page read one stream; the vendor was asked by the gateway's polls, not by the page.
      const stream = fake.requests.filter(
        (r) => r.method === 'GET' && r.path.endsWith('/userdefined/series/UD-1/data'),
      );
      expect(stream.length).toBeGreaterThanOrEqual(2);
    } finally {
      await page.close();
    }
    await eventually(
      async () => /atrium_watch_streams 0$/m.test(await (await fetch(`${gw.url}/metrics`)).text()),
      { what: 'the stream closed with the page' },
    );
  });
});
