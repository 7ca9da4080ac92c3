import { overrideDefaultLogDestination } from '../../src/core/logging/log-destination.js';
import { ConfigError, loadConfig } from '../../src/config/atrium-config.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { captureDestination, recordSecret } from '../observability/log-capture.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, type HttpResult, withGateway } from '../helpers/gateway.js';
import { FakeIdentityProvider } from '../helpers/identity-provider.js';

const TOKEN = 'sbx_macro_consumers_admin_0b7e';
const OPERATOR = 'operator-token-consumers-admin-61f2';

describe('admin API /admin/consumers (one gateway, consumers in memory: no Redis, no file)', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  const chunks: string[] = [];
  beforeAll(() => {
    const capture = captureDestination();
    overrideDefaultLogDestination({
      write(line: string) {
        chunks.push(line);
        capture.write(line);
      },
    });
  });
  afterAll(() => overrideDefaultLogDestination(captureDestination()));
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const idp = new FakeIdentityProvider();
  // The deprecated name still opens the admin API (and the console): one token, with a warning.
  const gw = withGateway({
    upstreams: { macro: { fake, token: TOKEN } },
    env: { ATRIUM_ADMIN_TOKEN: OPERATOR, LOG_LEVEL: 'info' },
    consumers: [reader],
    servers: [idp],
  });
  const admin = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    token = OPERATOR,
  ) =>
    http(`${gw.url}/admin/consumers${path}`, {
      method,
      headers: { 'x-operator-token': token, 'content-type': 'application/json', 'x-operator-name': 'alice' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  const keyOf = (res: HttpResult): string => {
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    recordSecret(res.json().key);
    return res.json().key as string;
  };
  const audit = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.context === 'Audit');

  it('warns once that ATRIUM_ADMIN_TOKEN is deprecated; the console takes the same token', async () => {
    expect(chunks.join('')).toContain('ATRIUM_ADMIN_TOKEN is deprecated');
    const state = await http(`${gw.url}/console/api/state`, {
      headers: { authorization: `Bearer ${OPERATOR}` },
    });
    expect(state.status).toBe(200);
  });

  it('refuses two different operator tokens at boot', () => {
    expect(() =>
      loadConfig(
        {
          UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9',
          UPSTREAM_MACRO_TOKEN: 'sbx_test_consumers_admin_macro',
          UPSTREAM_COMPANY_BASE_URL: 'http://127.0.0.1:9',
          UPSTREAM_COMPANY_TOKEN: 'sbx_test_consumers_admin_company',
          UPSTREAM_DOCUMENTS_BASE_URL: 'http://127.0.0.1:9',
          UPSTREAM_DOCUMENTS_TOKEN: 'sbx_test_consumers_admin_documents',
          UPSTREAM_DEALS_BASE_URL: 'http://127.0.0.1:9',
          UPSTREAM_DEALS_TOKEN: 'sbx_test_consumers_admin_deals',
          ATRIUM_ADMIN_TOKEN: 'one-operator-token-aaaa',
          ATRIUM_OPERATOR_TOKEN: 'another-operator-token-bbbb',
        },
        UPSTREAMS,
      ),
    ).toThrow(ConfigError);
  });

  it('lists and gets consumers without any key or digest', async () => {
    const list = await admin('GET', '');
    expect(list.status).toBe(200);
    expect(list.json()).toMatchObject({ source: 'memory', writable: true, lastError: null });
    const [c] = list.json().consumers;
    expect(c).toMatchObject({ id: 'reader', enabled: true, upstreams: ['macro'], write: false });
    expect(c.keys).toEqual([
      { id: expect.stringMatching(/^k-/), createdAt: null, expiresAt: null, state: 'active' },
    ]);
    expect(list.text).not.toContain(reader.consumer.keyHashes[0].toString('hex'));
    expect((await admin('GET', '/reader')).json().id).toBe('reader');
    expect((await admin('GET', '/nobody')).status).toBe(404);
  });

  it('needs the operator token; a consumer key is no operator token', async () => {
    expect((await admin('GET', '', undefined, reader.key)).status).toBe(401);
    expect((await http(`${gw.url}/admin/consumers`)).status).toBe(401);
  });

  it('creates a consumer (key shown once), updates it, and every change is validated like the file', async () => {
    const key = keyOf(
      await admin('POST', '', {
        id: 'web-app',
        upstreams: ['macro'],
        limits: [{ name: 'per-second', ttlMs: 1000, limit: 2 }],
        corsOrigins: ['https://web.example'],
      }),
    );
    expect(key).toMatch(/^atr_[A-Za-z0-9_-]{43}$/);
    expect((await gw.request('/macro/series/1', key)).headers['ratelimit-policy']).toBe('2;w=1');
    expect((await admin('GET', '/web-app')).text).not.toContain(key);
    // Duplicate id, unknown field, bad values: refused before anything changes, naming the field.
    expect((await admin('POST', '', { id: 'web-app', upstreams: ['macro'] })).json().error.code).toBe(
      'CONFLICT',
    );
    const bad = await admin('PATCH', '/web-app', { upstreams: ['nope'] });
    expect([bad.status, bad.json().error.message]).toEqual([
      400,
      expect.stringContaining('consumer "web-app".upstreams: unknown upstream'),
    ]);
    expect((await admin('PATCH', '/web-app', { weight: 0 })).status).toBe(400);
    expect((await admin('PATCH', '/web-app', { keyHashes: [] })).json().error.parameter).toBe('keyHashes');
    expect((await admin('PATCH', '/web-app', '[')).status).toBe(400);
    expect((await admin('PATCH', '/web-app', {})).status).toBe(400);
    const updated = await admin('PATCH', '/web-app', {
      limits: [{ name: 'per-minute', ttlMs: 60_000, limit: 100 }],
      write: true,
    });
    expect(updated.json()).toMatchObject({ write: true, limits: [{ name: 'per-minute', limit: 100 }] });
    // The new limits are in force at once (the quota plan is rebuilt for the changed consumer).
    expect((await gw.request('/macro/series/2', key)).headers['ratelimit-policy']).toBe('100;w=60');
  });

  it('disable answers 403 with the reason; enable restores; delete answers 401', async () => {
    const key = keyOf(await admin('POST', '', { id: 'temp-app', upstreams: ['macro'] }));
    expect((await admin('POST', '/temp-app/disable')).json().enabled).toBe(false);
    const refused = await gw.request('/macro/series/3', key);
    expect([refused.status, refused.json().error.message]).toEqual([
      403,
      'Consumer "temp-app" is disabled by the operator.',
    ]);
    await admin('POST', '/temp-app/enable');
    expect((await gw.request('/macro/series/3', key)).status).toBe(200);
    expect((await admin('DELETE', '/temp-app')).status).toBe(204);
    expect((await gw.request('/macro/series/3', key)).status).toBe(401);
    expect((await admin('DELETE', '/temp-app')).status).toBe(404);
  });

  it('key rotation: add, schedule, retire; refuses to leave a consumer without a usable key', async () => {
    const created = await admin('POST', '', { id: 'rot-app', upstreams: ['macro'] });
    const oldKey = keyOf(created);
    const oldId = created.json().keyId as string;
    const added = await admin('POST', '/rot-app/keys', { expiresAt: '2999-01-01T00:00:00Z' });
    const newKey = keyOf(added);
    expect(added.json().consumer.keys.map((k: { id: string }) => k.id)).toEqual([oldId, added.json().keyId]);
    expect((await admin('POST', '/rot-app/keys', { expiresAt: '2000-01-01T00:00:00Z' })).status).toBe(400);
    for (const k of [oldKey, newKey]) expect((await gw.request('/macro/series/4', k)).status).toBe(200);
    // An expiry in the past ends the key at once.
    const expired = await admin('PATCH', `/rot-app/keys/${oldId}`, { expiresAt: '2001-01-01T00:00:00Z' });
    expect(expired.json().keys[0]).toMatchObject({ id: oldId, state: 'expired' });
    expect((await gw.request('/macro/series/4', oldKey)).status).toBe(401);
    expect((await admin('PATCH', `/rot-app/keys/${oldId}`, { expiresAt: null })).json().keys[0].state).toBe(
      'active',
    );
    expect((await gw.request('/macro/series/4', oldKey)).status).toBe(200);
    expect((await admin('DELETE', `/rot-app/keys/${oldId}`)).status).toBe(200);
    expect((await gw.request('/macro/series/4', oldKey)).status).toBe(401);
    expect((await admin('DELETE', `/rot-app/keys/${oldId}`)).status).toBe(404);
    const last = await admin('PATCH', `/rot-app/keys/${added.json().keyId}`, {
      expiresAt: '2001-01-01T00:00:00Z',
    });
    expect(last.status).toBe(409);
    expect((await gw.request('/macro/series/4', newKey)).status).toBe(200);
  });

  it('accepts an oidc block (end-user tokens): validated, shown, in force at once, removable', async () => {
    keyOf(await admin('POST', '', { id: 'spa', upstreams: ['macro'] }));
    const token = await idp.sign({ sub: 'alice', aud: 'spa-client' });
    const call = () => http(`${gw.url}/macro/series/5`, { headers: { authorization: `Bearer ${token}` } });
    expect((await call()).status).toBe(401);
    for (const [oidc, field] of [
      [{ issuer: idp.issuer, audience: 'spa-client', algorithms: ['HS256'] }, 'algorithms'],
      [{ issuer: idp.issuer, audience: 'spa-client', algorithms: ['none'] }, 'algorithms'],
      [{ issuer: 'http://idp.example', audience: 'spa-client' }, 'issuer'],
      [{ issuer: idp.issuer }, 'audience'],
      [{ issuer: idp.issuer, audience: 'x', clockSkewSeconds: 3600 }, 'clockSkewSeconds'],
      [{ issuer: idp.issuer, audience: 'x', extra: 1 }, 'unknown field'],
    ] as const) {
      const bad = await admin('PATCH', '/spa', { oidc });
      expect([bad.status, bad.json().error.message]).toEqual([400, expect.stringContaining(field)]);
    }
    const set = await admin('PATCH', '/spa', { oidc: { issuer: idp.issuer, audience: 'spa-client' } });
    expect(set.status).toBe(200);
    expect(set.json().oidc).toMatchObject({
      issuer: idp.issuer,
      jwksUri: null,
      audience: ['spa-client'],
      clockSkewSeconds: 30,
    });
    expect(set.json().oidc.algorithms).not.toContain('HS256');
    expect((await call()).status).toBe(200);
    // Two consumers may not accept the same issuer and audience: a token must name one consumer.
    const dup = await admin('POST', '', {
      id: 'spa-twin',
      upstreams: ['macro'],
      oidc: { issuer: idp.issuer, audience: 'spa-client' },
    });
    expect([dup.status, dup.json().error.message]).toEqual([400, expect.stringContaining('spa-client')]);
    expect((await admin('PATCH', '/spa', { oidc: null })).json().oidc).toBeNull();
    expect((await call()).status).toBe(401);
  });

  it('writes one audit line per change: who and what, never a key or a digest', async () => {
    const lines = audit();
    expect(lines.map((l) => l.action)).toEqual(
      expect.arrayContaining([
        'consumer.create',
        'consumer.update',
        'consumer.disable',
        'consumer.enable',
        'consumer.delete',
        'consumer.key.add',
        'consumer.key.expire',
        'consumer.key.retire',
      ]),
    );
    expect(lines.find((l) => l.action === 'consumer.update')).toMatchObject({
      actor: 'alice',
      ip: '127.0.0.1',
      consumer: 'web-app',
      fields: ['limits', 'write'],
    });
    const text = JSON.stringify(lines);
    expect(text).not.toMatch(/atr_[A-Za-z0-9_-]{20}/);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
    // Refused changes change nothing and are not audited as changes.
    expect(lines.filter((l) => l.action === 'consumer.create').map((l) => l.consumer)).toEqual([
      'web-app',
      'temp-app',
      'rot-app',
      'spa',
    ]);
  });
});
