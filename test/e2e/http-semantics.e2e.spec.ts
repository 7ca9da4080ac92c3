import { testConsumer } from '../helpers/consumers.js';
import { http, startGateway, type GatewayHandle } from '../helpers/gateway.js';

// Issue 12 item 6: HTTP as clients expect (405 with Allow, WWW-Authenticate on 401, RateLimit-* on 403).
describe('HTTP as clients expect', () => {
  const macroOnly = testConsumer({
    id: 'macro-only',
    upstreams: new Set(['macro']),
    limits: [{ name: 'per-minute', ttlMs: 60_000, limit: 100 }],
  });
  let gw: GatewayHandle;

  beforeAll(async () => {
    // Every upstream points at the discard port: none of these answers may need one.
    gw = await startGateway({ env: {}, consumers: [macroOnly.consumer] });
  });
  afterAll(async () => gw?.close());

  const auth = { authorization: `Bearer ${macroOnly.key}` };

  it('a wrong method on a path that exists: 405 with Allow, in the envelope', async () => {
    const res = await http(`${gw.url}/macro/feeds`, { method: 'DELETE', headers: auth });
    expect(res.status).toBe(405);
    expect(res.headers.allow?.split(', ')).toContain('GET');
    expect(res.json().error).toMatchObject({ code: 'METHOD_NOT_ALLOWED', status: 405 });
    const param = await http(`${gw.url}/macro/series/123/data/`, { method: 'PUT', headers: auth });
    expect(param.status).toBe(405);
    expect(param.headers.allow?.split(', ')).toContain('GET');
    const health = await http(`${gw.url}/health/ready`, { method: 'POST' });
    expect(health.status).toBe(405);
    expect(health.headers.allow?.split(', ')).toContain('GET');
  });

  it('a path that does not exist stays 404, without Allow', async () => {
    const res = await http(`${gw.url}/macro/no-such-thing`, { method: 'DELETE', headers: auth });
    expect(res.status).toBe(404);
    expect(res.headers.allow).toBeUndefined();
  });

  it('401 answers carry WWW-Authenticate: Bearer realm="atrium"', async () => {
    const tries: Record<string, string>[] = [{}, { authorization: 'Bearer atr_test_not_a_key_at_all_123' }];
    for (const headers of tries) {
      const res = await http(`${gw.url}/macro/feeds`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="atrium"');
    }
  });

  it('403 answers carry the RateLimit-* headers', async () => {
    const res = await http(`${gw.url}/company/dictionary/periods`, { headers: auth });
    expect(res.status).toBe(403);
    expect(res.json().error.code).toBe('FORBIDDEN');
    expect(res.headers['ratelimit-limit']).toBe('100');
    expect(Number(res.headers['ratelimit-remaining'])).toBeLessThan(100);
    expect(res.headers['ratelimit-reset']).toMatch(/^\d+$/);
    expect(res.headers['ratelimit-policy']).toBe('100;w=60');
  });
});
