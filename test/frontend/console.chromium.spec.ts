import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { keyIdOf } from '../../src/core/auth/consumer-record.js';
import { recordSecret } from '../observability/log-capture.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { SseClient } from '../helpers/sse.js';
import { http, withGateway } from '../helpers/gateway.js';
import { describeNeeding } from '../helpers/system-parts.js';
import { launchChromium, textWhen } from '../helpers/chromium.js';

/**
 * The operator console end to end in real headless Chromium (Debian's package, driven by playwright-core):
 * the page loads, takes the operator key, shows the four upstreams, and reflects an upstream 429.
 * `ATRIUM_SCREENSHOTS=docs npx jest test/frontend/console.chromium` also writes the screenshots of docs/frontend.md
 * (npm run docs:screenshots).
 */
const SHOTS = process.env.ATRIUM_SCREENSHOTS
  ? resolve(__dirname, '../..', process.env.ATRIUM_SCREENSHOTS)
  : undefined;
const UPSTREAMS = ['macro', 'company', 'documents', 'deals'];

describeNeeding('chromium', 'operator console in headless Chromium', () => {
  const operatorKey = `op_${randomBytes(24).toString('base64url')}`;
  const web = testConsumer({
    id: 'dashboard-web',
    upstreams: new Set(['macro', 'company']),
    limits: [
      { name: 'per-second', ttlMs: 1000, limit: 20 },
      { name: 'per-minute', ttlMs: 60_000, limit: 600 },
    ],
  });
  const research = testConsumer({
    id: 'research-tools',
    upstreams: new Set(UPSTREAMS),
    write: true,
    weight: 2,
    limits: [{ name: 'per-second', ttlMs: 1000, limit: 50 }],
  });
  // Its key is rotated from the console (the others keep theirs for the traffic below).
  const batch = testConsumer({ id: 'nightly-batch', upstreams: new Set(['macro']) });
  // A browser app whose users sign in with the company IdP: the console says it takes tokens, and from whom.
  const spa = testConsumer({
    id: 'spa-web',
    upstreams: new Set(['macro']),
    tokens: {
      issuer: 'https://login.example.com/realms/staff',
      audience: ['spa-web'],
      algorithms: ['RS256'],
      clockSkewSeconds: 30,
      jwksCooldownMs: 30_000,
      userLimits: [],
    },
  });
  const gw = withGateway({
    sandbox: true,
    env: { ATRIUM_OPERATOR_TOKEN: operatorKey },
    consumers: [web, research, batch, spa],
  });
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
  });

  const field = (upstream: string, name: string) =>
    page.locator(`[data-upstream="${upstream}"] [data-field="${name}"]`);

  it('loads, asks for the operator key and refuses a wrong one', async () => {
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(m.text());
    });
    const res = await page.goto(gw.url + '/console');
    expect(res?.status()).toBe(200);
    await page.locator('#login').waitFor({ state: 'visible' });
    await page.fill('#token', 'not-the-operator-key');
    await page.click('#login-form button[type=submit]');
    expect(await textWhen(page.locator('#login-msg'), /not accepted/)).toMatch(/not accepted/);
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      await page.locator('#login').screenshot({ path: resolve(SHOTS, 'console-login.png') });
    }
    await page.fill('#token', operatorKey);
    await page.click('#login-form button[type=submit]');
    await page.locator('#app').waitFor({ state: 'visible' });
    // CSP allows the inline script and style by hash: no violation, no script error.
    expect(pageErrors.filter((e) => !/401/.test(e))).toEqual([]);
  });

  it('shows the four upstreams and the consumers', async () => {
    await page.locator('[data-upstream="deals"]').waitFor();
    const names = await page
      .locator('[data-upstream]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-upstream')));
    expect(names).toEqual(expect.arrayContaining(UPSTREAMS));
    expect(await textWhen(field('macro', 'reachable'), /up/)).toMatch(/^up/);
    expect(
      await page.locator('[data-consumer="dashboard-web"] [data-window="per-minute"]').textContent(),
    ).toContain('600');
    expect(await page.locator('[data-consumer="research-tools"]').isVisible()).toBe(true);
    const tokens = page.locator('[data-consumer="spa-web"] [data-field="tokens"]');
    expect(await tokens.textContent()).toBe('tokens from login.example.com/realms/staff');
    expect(await tokens.getAttribute('title')).toBe('audience: spa-web');
    expect(await page.locator('[data-consumer="dashboard-web"] [data-field="tokens"]').count()).toBe(0);
    // Charts are SVG drawn by the page itself.
    expect(await page.locator('[data-upstream="macro"] svg').count()).toBeGreaterThanOrEqual(3);
    // The key lives in this tab's sessionStorage, never in the URL.
    expect(await page.evaluate(() => sessionStorage.getItem('atrium.operatorToken'))).toBe(operatorKey);
    expect(page.url()).not.toContain(operatorKey);
  });

  it('refreshes itself (a new request shows up without a reload)', async () => {
    const before = await page.locator('#updated').textContent();
    await page.waitForFunction((b) => document.getElementById('updated')?.textContent !== b, before, {
      timeout: 6000,
    });
    expect(await page.locator('#updated').getAttribute('class')).toMatch(/\bok\b/);
  });

  it('shows vendor usage per consumer and upstream, today and over 7 days', async () => {
    const res = await http(`${gw.url}/company/companies/match?company_name=usage-probe&limit=1`, {
      headers: { authorization: `Bearer ${web.key}` },
    });
    expect(res.status).toBe(200);
    const calls = page.locator('[data-usage="dashboard-web/company"] [data-field="vendorCalls"]');
    expect(await textWhen(calls, /^1 \/ 1$/)).toBe('1 / 1');
    expect(
      await page.locator('[data-usage="dashboard-web/company"] [data-field="requests"]').textContent(),
    ).toBe('1 / 1');
  });

  it('lists the most watched resources: subscribers on this replica, then nothing once the streams close', async () => {
    const path = '/macro/series/310902301/data';
    const streams = await Promise.all(
      [web, web, research].map((c) =>
        SseClient.open(`${gw.url}/watch?path=${encodeURIComponent(path)}`, {
          authorization: `Bearer ${c.key}`,
        }),
      ),
    );
    try {
      await Promise.all(streams.map((s) => s.nth(1, (e) => e.event === 'answer')));
      const row = page.locator(`#watched [data-resource="${path}"]`);
      expect(await textWhen(row.locator('[data-field="subscribers"]'), /^3$/)).toBe('3');
      expect(await row.locator('[data-field="subscribersHere"]').textContent()).toBe('3');
      expect(await row.locator('[data-field="polledBy"]').textContent()).toBe('this replica');
      expect(await row.locator('[data-field="lastChange"]').textContent()).toBe('none yet');
    } finally {
      for (const s of streams) s.close();
    }
    expect(await textWhen(page.locator('#watched'), /nothing watched/)).toMatch(
      /nothing watched on this replica/,
    );
  });

  it('rotates a consumer’s key: a new key shown once, both work, the old one retired; disable and enable', async () => {
    const call = async (key: string) => (await gw.request('/macro/dictionary/units', key)).status;
    const oldId = keyIdOf(batch.consumer.keyHashes[0]);
    const row = page.locator('[data-consumer="nightly-batch"]');
    expect(await textWhen(row.locator('[data-field="state"]'), /enabled/)).toBe('enabled');
    await row.locator('[data-action="rotate"]').click();
    const panel = page.locator('#rotation[data-rotation="nightly-batch"]');
    await panel.waitFor({ state: 'visible' });
    expect(await panel.locator('[data-key]').count()).toBe(1);
    // The only key cannot be retired from the console.
    expect(await panel.locator(`[data-key="${oldId}"] [data-action="retire"]`).isDisabled()).toBe(true);

    await page.click('#new-key');
    const newKey = await textWhen(page.locator('#issued-key'), /^atr_/);
    expect(newKey).toMatch(/^atr_[A-Za-z0-9_-]{43}$/);
    recordSecret(newKey);
    expect(await page.locator('#issued-for').textContent()).toBe('nightly-batch');
    expect([await call(batch.key), await call(newKey)]).toEqual([200, 200]);
    await eventually(async () => (await panel.locator('[data-key]').count()) === 2, {
      what: 'two keys listed',
    });
    // The key stays on screen across refreshes until the operator hides it.
    const shown = await page.locator('#updated').textContent();
    await eventually(async () => (await page.locator('#updated').textContent()) !== shown, {
      what: 'a refresh',
    });
    expect(await page.locator('#issued-key').textContent()).toBe(newKey);
    await page.click('#hide-issued');
    expect(await page.locator('#issued').isVisible()).toBe(false);

    await panel.locator(`[data-key="${oldId}"] [data-action="retire"]`).click();
    await eventually(async () => (await call(batch.key)) === 401, { what: 'the old key retired' });
    expect(await call(newKey)).toBe(200);
    expect(await textWhen(page.locator('#rotation-msg'), /retired/)).toContain(oldId);
    await eventually(async () => (await panel.locator('[data-key]').count()) === 1, {
      what: 'one key listed',
    });
    expect(await textWhen(row.locator('[data-field="keys"]'), /^1 active/)).toMatch(/^1 active/);

    await page.click('#toggle-consumer');
    expect(await textWhen(row.locator('[data-field="state"]'), /disabled/)).toBe('disabled');
    expect(await call(newKey)).toBe(403);
    await eventually(
      async () => (await page.locator('#toggle-consumer').textContent()) === 'Enable consumer',
      {
        what: 'the enable button',
      },
    );
    await page.click('#toggle-consumer');
    expect(await textWhen(row.locator('[data-field="state"]'), /^enabled/)).toBe('enabled');
    expect(await call(newKey)).toBe(200);
    await page.click('#close-rotation');
    expect(await panel.isVisible()).toBe(false);
  });

  describe('the console: regressions once seen', () => {
    it('says "operator token" on the login, as the banner does', async () => {
      const login = await page.evaluate(() => {
        const box = document.getElementById('login');
        return [box?.textContent ?? '', document.getElementById('token')?.getAttribute('placeholder')];
      });
      expect(login[0]).toContain('operator token');
      expect(login[0]).not.toContain('operator key');
      expect(login[1]).toBe('operator token');
    });

    it('keeps every status pill inside its card, at the docs width and on a narrow screen', async () => {
      const overflowing = () =>
        page.locator('[data-upstream]').evaluateAll((cards) =>
          cards.flatMap((card) => {
            const box = card.getBoundingClientRect();
            return [...card.querySelectorAll('.pill')]
              .map((p) => p.getBoundingClientRect())
              .filter((r) => r.right > box.right + 0.5 || r.left < box.left - 0.5)
              .map(
                (r) =>
                  `${card.getAttribute('data-upstream')}: ${r.left}–${r.right} outside ${box.left}–${box.right}`,
              );
          }),
        );
      await page.locator('[data-upstream="deals"] [data-field="breaker"]').waitFor();
      expect(await overflowing()).toEqual([]);
      for (const width of [1100, 700]) {
        await page.setViewportSize({ width, height: 900 });
        expect(await overflowing()).toEqual([]);
      }
      await page.setViewportSize({ width: 1440, height: 900 });
    });

    it('shows a quota window whole again once it has reset, not frozen at its last count', async () => {
      const res = await http(`${gw.url}/macro/dictionary/units`, {
        headers: { authorization: `Bearer ${web.key}` },
      });
      expect(res.status).toBe(200);
      const perSecond = page.locator('[data-consumer="dashboard-web"] [data-window="per-second"] .q');
      const perMinute = page.locator('[data-consumer="dashboard-web"] [data-window="per-minute"] .q');
      // The count shows in the minute window (the call above spent one) ...
      expect(await textWhen(perMinute, /^[1-9]\d* \/ 600$/, 4000)).toMatch(/^[1-9]\d* \/ 600$/);
      // ... while the per-second window, reset a second after that call, shows whole again (it may never
      // be sampled spent: the console reads every 2 s), not frozen at the count of its last request.
      expect(await textWhen(perSecond, /^0 \/ 20$/, 8000)).toBe('0 / 20');
      expect(await perMinute.textContent()).toMatch(/^[1-9]\d* \/ 600$/);
    });

    it('says "no lookups" for an upstream nobody called, and a percentage where answers came from the cache', async () => {
      for (let i = 0; i < 2; i++)
        expect(
          (
            await http(`${gw.url}/macro/dictionary/units`, {
              headers: { authorization: `Bearer ${web.key}` },
            })
          ).status,
        ).toBe(200);
      expect(await textWhen(field('macro', 'hit-ratio'), /^\d+%$/)).toMatch(/^\d+%$/);
      expect(await field('deals', 'hit-ratio').textContent()).toBe('no lookups');
    });
  });

  describe('after a 429 from the macro upstream', () => {
    beforeAll(async () => {
      const bearer = { authorization: `Bearer ${research.key}` };
      if (SHOTS) {
        // Some traffic over a few refreshes, so the charts have something to draw.
        for (let i = 0; i < 16; i++) {
          const shown = i % 4 === 3 ? await page.locator('#updated').textContent() : undefined;
          await Promise.all([
            http(`${gw.url}/macro/feeds?limit=${1 + (i % 3)}`, { headers: bearer }),
            http(`${gw.url}/macro/dictionary/units`, { headers: bearer }),
            http(`${gw.url}/macro/layout/tables/TB1207`, { headers: { authorization: `Bearer ${web.key}` } }),
          ]);
          // Four batches per refresh of the page (every 2 s), so the charts get points over a few refreshes.
          if (shown !== undefined)
            await eventually(async () => (await page.locator('#updated').textContent()) !== shown, {
              what: 'a console refresh',
            });
        }
      }
      gw.sandbox.macro.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 30 } });
      const res = await http(`${gw.url}/macro/feeds?limit=5&probe=cooldown`, { headers: bearer });
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBeDefined();
    });
    afterAll(async () => {
      if (SHOTS) {
        // From the top: the sticky header would otherwise be drawn where the page was scrolled to.
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: resolve(SHOTS, 'console.png'), fullPage: true });
      }
      gw.sandbox.macro.reset();
    });

    it('lists the 429 among the macro upstream’s last errors', async () => {
      const text = await textWhen(
        field('macro', 'last-errors'),
        (t) => t.includes('UPSTREAM_RATE_LIMITED'),
        8000,
      );
      expect(text).toContain('429');
      expect(text).toContain('UPSTREAM_RATE_LIMITED');
      expect(text).toContain('macro.feeds.list');
    });

    it('shows the fleet cooldown counting down (readiness fact cooldownRemainingSeconds)', async () => {
      const text = await textWhen(field('macro', 'cooldown'), /^\d+ s$/, 8000);
      expect(text).toMatch(/^\d+ s$/);
      const seconds = Number.parseInt(text, 10);
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(30);
      // The other upstreams are not cooling down.
      expect(await field('company', 'cooldown').textContent()).not.toMatch(/^\d+ s$/);
    });
  });
});
