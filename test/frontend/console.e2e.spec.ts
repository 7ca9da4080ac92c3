import { randomBytes } from 'node:crypto';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http, startGateway, type GatewayHandle } from '../helpers/gateway.js';

const TOKEN = 'sbx_macro_console_secret_5d0c';

describe('operator console over HTTP', () => {
  const operatorKey = `op_${randomBytes(24).toString('base64url')}`;
  const reader = testConsumer({
    id: 'reader',
    upstreams: new Set(['macro']),
    limits: [{ name: 'per-minute', ttlMs: 60_000, limit: 100 }],
  });
  let fake: FakeMacroUpstream;
  let gw: GatewayHandle;
  let off: GatewayHandle;

  beforeAll(async () => {
    fake = new FakeMacroUpstream({ token: TOKEN });
    await fake.start();
    const env = { UPSTREAM_MACRO_BASE_URL: fake.url, UPSTREAM_MACRO_TOKEN: TOKEN };
    [gw, off] = await Promise.all([
      startGateway({ env: { ...env, ATRIUM_OPERATOR_TOKEN: operatorKey }, consumers: [reader.consumer] }),
      startGateway({ env, consumers: [reader.consumer] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([gw?.close(), off?.close()]);
    await fake?.close();
  });

  const state = (headers: Record<string, string>) => http(gw.url + '/console/api/state', { headers });

  it('serves one self-contained page with a strict CSP and no external references', async () => {
    const res = await http(gw.url + '/console');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("connect-src 'self'");
    // Inline code only: no src/href to load, no CSS url(), no absolute URL but the SVG namespace.
    expect(res.text).not.toMatch(/\s(src|href)="(?!data:)/i);
    expect(res.text).not.toMatch(/url\(/i);
    expect(res.text.match(/https?:\/\/[^\s'"]+/g) ?? []).toEqual(['http://www.w3.org/2000/svg']);
    expect(res.text).not.toContain(operatorKey);
  });

  it('guards the state with the operator key only', async () => {
    expect((await state({})).status).toBe(401);
    expect((await state({ authorization: `Bearer ${reader.key}` })).status).toBe(401);
    expect((await state({ authorization: `Bearer ${operatorKey}x` })).status).toBe(401);
    expect((await state({ authorization: 'Bearer short' })).status).toBe(401);
    const ok = await state({ 'x-operator-token': operatorKey });
    expect(ok.status).toBe(200);
    expect(ok.headers['cache-control']).toBe('no-store');
    expect((await http(`${gw.url}/console/api/state?token=${operatorKey}`)).status).toBe(401);
  });

  it('lists the four configured upstreams with their state, and consumers with their quotas', async () => {
    const res = await state({ authorization: `Bearer ${operatorKey}` });
    const body = res.json();
    expect(body.upstreams.map((u: { name: string }) => u.name)).toEqual(
      expect.arrayContaining(['macro', 'company', 'documents', 'deals']),
    );
    const macro = body.upstreams.find((u: { name: string }) => u.name === 'macro');
    expect(macro).toMatchObject({
      registered: true,
      reachable: true,
      budget: { configuredRatePerSec: 10, burst: 20 },
      lastErrors: [],
    });
    expect(body.consumers).toEqual([
      expect.objectContaining({
        id: 'reader',
        upstreams: ['macro'],
        quota: [expect.objectContaining({ window: 'per-minute', limit: 100 })],
      }),
    ]);
    expect(typeof body.instance.id).toBe('string');
    expect(res.text).not.toContain(TOKEN);
    expect(res.text).not.toContain(reader.key);
  });

  it('records upstream errors by route, without paths, queries or keys', async () => {
    // Every attempt fails (retries included), until the reset below.
    fake.behave({ failWith: { status: 503 } });
    const failed = await http(`${gw.url}/macro/feeds/FD-secret-id?token=${reader.key}`);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    fake.reset();
    const res = await state({ authorization: `Bearer ${operatorKey}` });
    const macro = res.json().upstreams.find((u: { name: string }) => u.name === 'macro');
    expect(macro.lastErrors[0]).toMatchObject({ status: failed.status, route: 'macro.feeds.get' });
    expect(res.text).not.toContain('FD-secret-id');
    expect(res.text).not.toContain(reader.key);
  });

  it('a quiet minute shows the cache hit ratio since start, not n/a, and a quota window as reset', async () => {
    const auth = { authorization: `Bearer ${operatorKey}` };
    const macroOf = async () =>
      (await state(auth)).json().upstreams.find((u: { name: string }) => u.name === 'macro');
    for (let i = 0; i < 3; i++)
      expect((await http(`${gw.url}/macro/dictionary/units?token=${reader.key}`)).status).toBe(200);
    // The console samples at most about once a second: the next sample counts the calls above.
    let busy = await macroOf();
    await eventually(async () => (busy = await macroOf()).hitRatioSince !== null, {
      what: 'a sample with the lookups',
    });
    expect(busy.hitRatioSince).toBe('recent');
    const sinceStart = busy.hitRatio;
    expect(sinceStart).toBeGreaterThan(0);
    // Only Date moves (no timer is faked): the console's samples see a minute without any lookup.
    jest.useFakeTimers({
      doNotFake: [
        'setTimeout',
        'clearTimeout',
        'setInterval',
        'clearInterval',
        'setImmediate',
        'clearImmediate',
        'nextTick',
        'queueMicrotask',
        'hrtime',
        'performance',
      ],
      now: Date.now(),
    });
    try {
      jest.setSystemTime(Date.now() + 61_000);
      await macroOf();
      jest.setSystemTime(Date.now() + 1_000);
      const quiet = await macroOf();
      expect(quiet.cache).toMatchObject({ hit: 0, miss: 0 });
      expect(quiet).toMatchObject({ hitRatioSince: 'start' });
      expect(quiet.hitRatio).toBeGreaterThan(0);
      // The per-minute window of the last call has passed: the quota is whole again.
      const reader_ = (await state(auth)).json().consumers.find((c: { id: string }) => c.id === 'reader');
      expect(reader_.quota[0]).toMatchObject({ window: 'per-minute', used: 0, remaining: 100 });
    } finally {
      jest.useRealTimers();
    }
  });

  it('is off (404) when no operator key is configured', async () => {
    expect((await http(off.url + '/console')).status).toBe(404);
    expect(
      (await http(off.url + '/console/api/state', { headers: { authorization: 'Bearer anything' } })).status,
    ).toBe(404);
  });
});
