import { Redis } from 'ioredis';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { recordSecret } from '../observability/log-capture.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http, type HttpResult, withGateway } from '../helpers/gateway.js';
import { describeRedis } from '../helpers/redis.js';
import { TcpRelay } from '../helpers/tcp-relay.js';

const TOKEN = 'sbx_macro_consumers_fleet_7a21';
const OPERATOR = 'operator-token-consumers-fleet-3c9d';
/** Issue 16: a change is in force on every replica within one second. */
const WITHIN_MS = 1_000;

describeRedis('consumers managed at run time across 2 gateway processes sharing Redis', ({ prefix, url }) => {
  const seeded = testConsumer({ id: 'seeded-app', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const target = new URL(url);
  // The replicas reach Redis through a relay the last test cuts (Redis down for the gateways only).
  const proxy = new TcpRelay(target.hostname, Number(target.port || 6379));
  beforeAll(() => proxy.start());
  afterAll(() => proxy.cut());
  const fleet = withGateway({
    mode: 'process',
    instances: 2,
    upstreams: { macro: { fake, token: TOKEN } },
    env: () => ({
      REDIS_URL: proxy.url,
      ATRIUM_REDIS_PREFIX: prefix,
      ATRIUM_OPERATOR_TOKEN: OPERATOR,
      UPSTREAM_MACRO_RATE_PER_SEC: '1000',
      UPSTREAM_MACRO_BURST: '1000',
      // Redis is reached through the relay in this test process, whose event loop a loaded machine can hold
      // past the default 100 ms: an admin write would be refused as if Redis were away. The outage test
      // cuts the relay, which fails commands at once whatever this bound.
      ATRIUM_REDIS_COMMAND_TIMEOUT_MS: '2000',
    }),
    // Written to the consumers file: it seeds the empty Redis store.
    consumers: [seeded],
    spawnTimeoutMs: 40_000,
    hookTimeoutMs: 90_000,
  });
  let redis: Redis;
  let n = 0;
  beforeAll(() => {
    redis = new Redis(url);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const [A, B] = [0, 1];
  const call = (replica: number, key: string): Promise<HttpResult> =>
    http(`${fleet.urls[replica]}/macro/series/${++n}`, { headers: { authorization: `Bearer ${key}` } });
  const admin = async (
    replica: number,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: object,
  ) =>
    http(`${fleet.urls[replica]}/admin/consumers${path}`, {
      method,
      headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const issued = (res: HttpResult): { key: string; keyId: string } => {
    expect(res.status).toBe(201);
    const { key, keyId } = res.json();
    recordSecret(key); // the post-run log scan looks for it
    return { key, keyId };
  };
  /** Waits (at most WITHIN_MS) until `key` gets `status` from every replica. */
  const inForceEverywhere = (key: string, status: number, what: string) =>
    Promise.all(
      [A, B].map((r) =>
        eventually(async () => (await call(r, key)).status === status, {
          timeoutMs: WITHIN_MS,
          what: `${what} on replica ${r}`,
        }),
      ),
    );

  it('the consumers file seeded the Redis store; both replicas serve its consumer', async () => {
    expect((await call(A, seeded.key)).status).toBe(200);
    expect((await call(B, seeded.key)).status).toBe(200);
    const list = (await admin(B, 'GET', '')).json();
    expect(list.source).toBe('redis');
    expect(list.writable).toBe(true);
    expect(list.consumers.map((c: { id: string }) => c.id)).toEqual(['seeded-app']);
    expect(await redis.hkeys(`${prefix}consumers`)).toEqual(['seeded-app']);
  });

  it('a consumer created on one replica calls the other with its key within 1 s; the store holds no key', async () => {
    const { key } = issued(await admin(A, 'POST', '', { id: 'new-app', upstreams: ['macro'] }));
    await inForceEverywhere(key, 200, 'the new key');
    const stored = await redis.hget(`${prefix}consumers`, 'new-app');
    expect(stored).not.toContain(key);
    expect(JSON.parse(stored!).keys).toHaveLength(1);
  });

  it('rotation with overlap: both keys work on both replicas, then only the new one; retiring is in force within 1 s', async () => {
    const first = issued(await admin(A, 'POST', '', { id: 'rotating-app', upstreams: ['macro'] }));
    await inForceEverywhere(first.key, 200, 'the first key');
    // Step 1, on the other replica: a second key. Both work everywhere.
    const second = issued(await admin(B, 'POST', '/rotating-app/keys'));
    await inForceEverywhere(second.key, 200, 'the second key');
    for (const r of [A, B]) expect((await call(r, first.key)).status).toBe(200);
    const listed = (await admin(A, 'GET', '/rotating-app')).json();
    expect(listed.keys.map((k: { id: string }) => k.id)).toEqual([first.keyId, second.keyId]);
    // Step 2: the old key is retired; 401 on both within 1 s, the new key still works.
    expect((await admin(A, 'DELETE', `/rotating-app/keys/${first.keyId}`)).status).toBe(200);
    await inForceEverywhere(first.key, 401, 'the retired key refused');
    for (const r of [A, B]) expect((await call(r, second.key)).status).toBe(200);
    // The last key cannot be retired: the consumer would be locked out without anyone deciding it.
    const last = await admin(B, 'DELETE', `/rotating-app/keys/${second.keyId}`);
    expect(last.status).toBe(409);
    expect(last.json().error.code).toBe('CONFLICT');
  });

  it('an overlap that ends by itself: the old key stops at its expiresAt on both replicas', async () => {
    const old = issued(await admin(A, 'POST', '', { id: 'expiring-app', upstreams: ['macro'] }));
    const fresh = issued(await admin(A, 'POST', '/expiring-app/keys'));
    const at = new Date(Date.now() + 1500).toISOString();
    expect((await admin(B, 'PATCH', `/expiring-app/keys/${old.keyId}`, { expiresAt: at })).status).toBe(200);
    await inForceEverywhere(fresh.key, 200, 'the new key');
    for (const r of [A, B]) expect((await call(r, old.key)).status).toBe(200);
    await eventually(
      async () => (await call(A, old.key)).status === 401 && (await call(B, old.key)).status === 401,
      { what: 'the old key past its expiresAt' },
    );
    for (const r of [A, B]) expect((await call(r, fresh.key)).status).toBe(200);
  });

  it('disable and delete are in force on both replicas within 1 s', async () => {
    const { key } = issued(await admin(A, 'POST', '', { id: 'short-lived', upstreams: ['macro'] }));
    await inForceEverywhere(key, 200, 'the key');
    expect((await admin(B, 'POST', '/short-lived/disable')).json().enabled).toBe(false);
    await inForceEverywhere(key, 403, 'the disabled consumer refused');
    expect((await admin(A, 'DELETE', '/short-lived')).status).toBe(204);
    await inForceEverywhere(key, 401, 'the deleted consumer refused');
    expect((await admin(B, 'GET', '/short-lived')).status).toBe(404);
  });

  it('Redis down: both replicas keep serving with the last set; changes are refused with 503; back, they sync again', async () => {
    await proxy.cut();
    await eventually(
      async () =>
        (
          await Promise.all([A, B].map(async (r) => (await http(`${fleet.urls[r]}/health/ready`)).json()))
        ).every((j) => j.checks?.redis?.ok === false),
      { what: 'both replicas seeing Redis down' },
    );
    // Each replica has tried to reload and failed (its version poll), and kept what it had.
    await eventually(
      async () =>
        (await Promise.all([A, B].map(async (r) => (await admin(r, 'GET', '')).json().lastError))).every(
          (e) => typeof e === 'string' && e.startsWith('Redis'),
        ),
      { what: 'a failed reload on both replicas' },
    );
    for (const r of [A, B]) {
      expect((await call(r, seeded.key)).status).toBe(200);
      expect((await admin(r, 'GET', '')).json().consumers.map((c: { id: string }) => c.id)).toContain(
        'new-app',
      );
    }
    const refused = await admin(A, 'POST', '', { id: 'while-down', upstreams: ['macro'] });
    expect(refused.status).toBe(503);
    expect(refused.json().error.message).toContain('nothing was changed');

    await proxy.restore();
    // Back: a change made on one replica reaches the other again.
    const { key } = await eventually(
      async () => {
        const res = await admin(A, 'POST', '', { id: 'after-outage', upstreams: ['macro'] });
        return res.status === 201 ? issued(res) : undefined;
      },
      { what: 'a change accepted once Redis is back' },
    );
    await eventually(async () => (await call(B, key)).status === 200, {
      what: 'the other replica in sync again',
    });
    expect((await admin(B, 'GET', '')).json().lastError).toBeNull();
  });
});
