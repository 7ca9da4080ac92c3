import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConsumersFile } from '../../src/core/auth/consumer-store.service.js';
import { demoConsumer } from '../../src/sandbox/demo-consumer.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, withGateway, writeConsumersFile } from '../helpers/gateway.js';

const TOKEN = 'sbx_macro_cors_sandbox_7c2d';
const LISTED = 'http://localhost:5173';

const preflight = (url: string, origin: string) =>
  http(`${url}/macro/feeds?limit=1`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization',
    },
  });
const get = (url: string, origin: string, key: string) =>
  http(`${url}/macro/feeds?limit=1`, { headers: { origin, authorization: `Bearer ${key}` } });

describe('sandbox CORS: the demo consumer accepts any local development origin', () => {
  // The demo consumer as src/gateway.ts builds it, with a test key (the log scan knows test keys).
  const demo = testConsumer({ id: 'demo' });
  const sandboxDemo = { ...demoConsumer(demo.key, ['macro']), keyHashes: demo.consumer.keyHashes };
  const web = testConsumer({ id: 'web', upstreams: new Set(['macro']), corsOrigins: [LISTED] });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const gw = withGateway({ upstreams: { macro: { fake, token: TOKEN } }, consumers: [sandboxDemo, web] });

  it.each(['http://localhost:4321', 'http://127.0.0.1:8080', 'http://localhost'])(
    'allows %s (preflight and call) with the demo key',
    async (origin) => {
      const pre = await preflight(gw.url, origin);
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe(origin);
      const res = await get(gw.url, origin, demo.key);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
    },
  );

  it.each([
    'https://localhost:4321',
    'http://localhost.evil.example',
    'http://192.168.1.5:3000',
    'https://app.example',
  ])('refuses %s', async (origin) => {
    expect((await preflight(gw.url, origin)).status).toBe(403);
    expect((await get(gw.url, origin, demo.key)).status).toBe(403);
  });

  it('gives other consumers nothing more than their own list', async () => {
    expect((await get(gw.url, 'http://localhost:4321', web.key)).status).toBe(403);
    expect((await get(gw.url, LISTED, web.key)).status).toBe(200);
  });
});

describe('production CORS stays explicit: without the sandbox demo consumer no other local origin passes', () => {
  const web = testConsumer({ id: 'web', upstreams: new Set(['macro']), corsOrigins: [LISTED] });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const gw = withGateway({ upstreams: { macro: { fake, token: TOKEN } }, consumers: [web] });

  it('allows the listed origin only', async () => {
    expect((await preflight(gw.url, LISTED)).status).toBe(204);
    expect((await get(gw.url, LISTED, web.key)).status).toBe(200);
    for (const origin of ['http://localhost:4321', 'http://127.0.0.1:5173']) {
      expect((await preflight(gw.url, origin)).status).toBe(403);
      expect((await get(gw.url, origin, web.key)).status).toBe(403);
    }
  });

  it('a consumers file cannot turn the local-origin allowance on', async () => {
    const file = writeConsumersFile(mkdtempSync(join(tmpdir(), 'atrium-cors-')), [web.consumer]);
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { consumers: Record<string, unknown>[] };
    parsed.consumers[0].corsAnyLocalPort = true;
    writeFileSync(file, JSON.stringify(parsed));
    expect(loadConsumersFile(file, ['macro'])[0]?.corsAnyLocalPort).toBeUndefined();
  });
});
