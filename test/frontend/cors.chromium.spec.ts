import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { withGateway } from '../helpers/gateway.js';
import { describeNeeding } from '../helpers/system-parts.js';
import { launchChromium } from '../helpers/chromium.js';

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

  it('a page traces and revalidates: traceparent and If-None-Match pass the preflight, ETag is readable, 304 costs no vendor call', async () => {
    const page = await pageAt(allowed.origin);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const out = await page.evaluate(
      async ({ url, key, traceId }) => {
        const headers = {
          authorization: 'Bearer ' + key,
          traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
          tracestate: 'app=1',
        };
        const first = await fetch(url, { headers });
        const body = await first.text();
        const etag = first.headers.get('etag');
        // A page's own If-None-Match goes to the network (Chromium adds `Cache-Control: max-age=0`, which
        // the gateway's cache honours as a revalidation, unlike `no-cache`): the gateway answers the 304.
        const again = await fetch(url, { headers: { ...headers, 'if-none-match': etag ?? '' } });
        return {
          status: first.status,
          bytes: body.length,
          etag,
          cacheControl: first.headers.get('cache-control'),
          xCache: first.headers.get('x-cache'),
          againStatus: again.status,
          againBody: await again.text(),
        };
      },
      { url: `${gw.url}/macro/series/310112/data`, key: web.key, traceId },
    );
    expect(out).toMatchObject({ status: 200, againStatus: 304, againBody: '', xCache: 'MISS' });
    expect(out.bytes).toBeGreaterThan(0);
    expect(out.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(out.cacheControl).toMatch(/^private, max-age=\d+$/);
    // One vendor call for both fetches, and it carried the page's trace.
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].headers.traceparent).toMatch(new RegExp(`^00-${traceId}-`));
    await page.close();
  });

  it('a page polls a view: its ETag and x-atrium-complete are readable, and it revalidates with 304', async () => {
    const page = await pageAt(allowed.origin);
    const out = await page.evaluate(
      async ({ url, key }) => {
        const headers = {
          authorization: 'Bearer ' + key,
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        };
        const first = await fetch(url, { headers });
        const json = (await first.json()) as { complete: boolean };
        const etag = first.headers.get('etag');
        const again = await fetch(url, { headers: { ...headers, 'if-none-match': etag ?? '' } });
        return {
          status: first.status,
          complete: json.complete,
          etag,
          completeHeader: first.headers.get('x-atrium-complete'),
          againStatus: again.status,
        };
      },
      { url: `${gw.url}/views/series-overview?id=310112`, key: web.key },
    );
    expect(out).toMatchObject({ status: 200, complete: true, completeHeader: 'true', againStatus: 304 });
    expect(out.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
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
