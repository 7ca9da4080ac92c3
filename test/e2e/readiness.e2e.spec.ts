import { ReadinessService } from '../../src/health/readiness.service.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, startGateway, type GatewayHandle } from '../helpers/gateway.js';

const TOKEN = 'sbx_macro_readiness_e2e_token_7d1';

// Issue 12 item 2: a Kubernetes readiness probe pulls a replica that answers 503. A vendor in trouble is
// the same on every replica, so it must not make any replica unready.
describe('readiness a Kubernetes probe can use', () => {
  const reader = testConsumer({ id: 'ready-reader', upstreams: new Set(['macro']) });
  let fake: FakeMacroUpstream;
  let gw: GatewayHandle;

  beforeAll(async () => {
    fake = new FakeMacroUpstream({ token: TOKEN });
    await fake.start();
    // company, documents and deals point at the discard port (startGateway): configured, unreachable.
    gw = await startGateway({
      env: {
        UPSTREAM_MACRO_BASE_URL: fake.url,
        UPSTREAM_MACRO_TOKEN: TOKEN,
        UPSTREAM_MACRO_BREAKER_MIN_SAMPLE: '2',
        UPSTREAM_MACRO_BREAKER_OPEN_MS: '60000',
        UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
      },
      consumers: [reader.consumer],
    });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  const upstream = (body: { upstreams: Array<{ name: string }> }, name: string) =>
    body.upstreams.find((u) => u.name === name) as Record<string, unknown>;

  it('unreachable vendors: 200, each reported degraded; a reachable one is not', async () => {
    const res = await http(`${gw.url}/health/ready`);
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body.ready).toBe(true);
    expect(body.status).toBe('degraded');
    for (const name of ['company', 'documents', 'deals'])
      expect(upstream(body, name)).toMatchObject({ reachable: false, degraded: true });
    expect(upstream(body, 'macro')).toMatchObject({ reachable: true, degraded: false });
  });

  it('an open breaker: still 200, the upstream degraded', async () => {
    fake.behave({ resetConnections: {} });
    for (let i = 0; i < 3; i++)
      await http(`${gw.url}/macro/series/${900_000 + i}`, {
        headers: { authorization: `Bearer ${reader.key}` },
      });
    fake.reset();
    const res = await http(`${gw.url}/health/ready`);
    expect(res.status).toBe(200);
    expect(upstream(res.json(), 'macro')).toMatchObject({ breaker: 'open', degraded: true });
  });

  it('shutting down: 503, and /health/live stays 200', async () => {
    gw.app.get(ReadinessService).beforeApplicationShutdown();
    const res = await http(`${gw.url}/health/ready`);
    expect(res.status).toBe(503);
    expect(res.json()).toMatchObject({
      ready: false,
      status: 'unready',
      checks: { shutdown: { ok: false } },
    });
    expect((await http(`${gw.url}/health/live`)).status).toBe(200);
  });
});
