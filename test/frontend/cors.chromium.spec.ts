import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { withGateway } from '../helpers/with-gateway.js';
import { describeNeeding } from '../helpers/system-parts.js';
import { launchChromium } from './support/chromium.js';

const TOKEN = 'sbx_macro_cors_browser_secret_8e21';

/** A page server: each port is its own browser origin. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title><p>app</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface FetchOutcome {
  ok: boolean;
  status?: number;
  requestId?: string | null;
  items?: number;
  error?: string;
}

/** CORS as a browser enforces it: real fetches from pages on other origins. */
describeNeeding('chromium', 'CORS in headless Chromium', () => {
  let browser: Browser;
  let allowed: Awaited<ReturnType<typeof pageServer>>;
  let stranger: Awaited<ReturnType<typeof pageServer>>;
  let web: ReturnType<typeof testConsumer>;

  // The pages' origins exist before the gateway: the consumer allows one of them.
  beforeAll(async () => {
    [allowed, stranger, browser] = await Promise.all([pageServer(), pageServer(), launchChromium()]);
    web = testConsumer({ id: 'web', upstreams: new Set(['macro']), corsOrigins: [allowed.origin] });
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([allowed, stranger].map((p) => p && new Promise((r) => p.server.close(r))));
  });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const gw = withGateway({ upstreams: { macro: { fake, token: TOKEN } }, consumers: () => [web] });

  async function pageAt(origin: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(origin + '/');
    return page;
  }

  const getFeeds = (page: Page) =>
    page.evaluate(
      async ({ url, key }): Promise<FetchOutcome> => {
        try {
          const res = await fetch(url, { headers: { authorization: 'Bearer ' + key } });
          await res.text();
          return { ok: true, status: res.status, requestId: res.headers.get('x-request-id') };
        } catch (e) {
          return { ok: false, error: String(e) };
        }
      },
      { url: `${gw.url}/macro/feeds?limit=1`, key: web.key },
    );

  it('a page on an allowed origin reads the answer and its exposed headers (after a preflight)', async () => {
    const page = await pageAt(allowed.origin);
    const out = await getFeeds(page);
    expect(out).toMatchObject({ ok: true, status: 200 });
    expect(out.requestId).toMatch(/.+/);
    expect(fake.requests).toHaveLength(1);
    await page.close();
  });

  it('a page on an allowed origin can POST /batch with a JSON body', async () => {
    const page = await pageAt(allowed.origin);
    const out = await page.evaluate(
      async ({ url, key }): Promise<FetchOutcome> => {
        try {
          const res = await fetch(url, {
            method: 'POST',
            headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' },
            body: JSON.stringify({
              requests: [{ path: '/macro/feeds?limit=1' }, { path: '/macro/dictionary/units' }],
            }),
          });
          const body = (await res.json()) as { items: Array<{ status: number }> };
          return { ok: true, status: res.status, items: body.items.filter((i) => i.status === 200).length };
        } catch (e) {
          return { ok: false, error: String(e) };
        }
      },
      { url: `${gw.url}/batch`, key: web.key },
    );
    expect(out).toMatchObject({ ok: true, status: 200, items: 2 });
    await page.close();
  });

  it('a page on another origin cannot read anything, and spends nothing', async () => {
    const page = await pageAt(stranger.origin);
    const out = await getFeeds(page);
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/TypeError|Failed to fetch/);
    expect(fake.requests).toHaveLength(0);
    await page.close();
  });
});
