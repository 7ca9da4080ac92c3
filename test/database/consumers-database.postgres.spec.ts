import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { recordSecret } from '../observability/log-capture.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayHandle, http, type HttpResult, startGateway, withGateway } from '../helpers/gateway.js';
import { databaseClient, describePostgres } from '../helpers/postgres.js';

const TOKEN = 'sbx_macro_consumers_db_51f3';
const OPERATOR = 'operator-token-consumers-db-9e27';
/** A change made on one replica is in force on every replica within one second. */
const WITHIN_MS = 1_000;

describePostgres('consumers, keys, audit and usage in PostgreSQL (two replicas, no Redis)', (pg) => {
  const seeded = testConsumer({ id: 'seeded-app', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const fleet = withGateway({
    instances: 2,
    upstreams: { macro: { fake, token: TOKEN } },
    env: () => ({ DATABASE_URL: pg.url, ATRIUM_OPERATOR_TOKEN: OPERATOR }),
    // The boot set (a consumers file in production) seeds the empty database once.
    consumers: [seeded],
  });
  const db = databaseClient(pg);

  let n = 0;
  const call = (url: string, key: string): Promise<HttpResult> =>
    http(`${url}/macro/series/${++n}`, { headers: { authorization: `Bearer ${key}` } });
  const admin = (url: string, method: string, path: string, body?: object) =>
    http(`${url}/admin${path}`, {
      method: method as 'GET',
      headers: {
        authorization: `Bearer ${OPERATOR}`,
        'content-type': 'application/json',
        'x-operator-name': 'ops-dana',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const inForce = (urls: string[], key: string, status: number, what: string) =>
    Promise.all(
      urls.map((u, i) =>
        eventually(async () => (await call(u, key)).status === status, {
          timeoutMs: WITHIN_MS,
          what: `${what} on replica ${i}`,
        }),
      ),
    );

  it('applies the migrations once and seeds the empty database from the boot set once', async () => {
    const migrations = await db.query('SELECT name FROM atrium_migrations');
    expect(migrations.rows.map((r) => r.name)).toEqual(['1764316800000_state', '1764921600000_watch-polls']);
    const consumers = await db.query('SELECT id FROM atrium_consumers');
    expect(consumers.rows).toEqual([{ id: 'seeded-app' }]);
    const keys = await db.query("SELECT encode(sha256, 'hex') AS h FROM atrium_consumer_keys");
    expect(keys.rows).toEqual([{ h: seeded.consumer.keyHashes[0].toString('hex') }]);
    const seeds = await db.query(
      "SELECT count(*)::int AS n FROM atrium_audit WHERE action = 'consumers.seed'",
    );
    expect(seeds.rows[0].n).toBe(1);
    for (const u of fleet.urls) expect((await call(u, seeded.key)).status).toBe(200);
  });

  it('a consumer made on one replica opens the other within a second; the row and its audit are in the database', async () => {
    const [A, B] = fleet.urls;
    const made = await admin(A, 'POST', '/consumers', { id: 'db-app', upstreams: ['macro'] });
    expect(made.status).toBe(201);
    const { key, keyId } = made.json();
    recordSecret(key);
    await inForce([A, B], key, 200, 'the new key');

    const row = await db.query(
      `SELECT c.id, c.settings->'upstreams' AS upstreams, k.key_id, k.created_at IS NOT NULL AS dated
         FROM atrium_consumers c JOIN atrium_consumer_keys k ON k.consumer_id = c.id WHERE c.id = 'db-app'`,
    );
    expect(row.rows).toEqual([{ id: 'db-app', upstreams: ['macro'], key_id: keyId, dated: true }]);
    const audit = await db.query(
      "SELECT actor, action, detail FROM atrium_audit WHERE consumer_id = 'db-app' ORDER BY id",
    );
    expect(audit.rows).toEqual([
      { actor: 'ops-dana', action: 'consumer.create', detail: { fields: ['id', 'upstreams'] } },
    ]);
    // Digests never reach the audit trail.
    const hex = (
      await db.query(
        "SELECT encode(sha256, 'hex') AS h FROM atrium_consumer_keys WHERE consumer_id = 'db-app'",
      )
    ).rows[0].h;
    expect(JSON.stringify((await db.query('SELECT * FROM atrium_audit')).rows)).not.toContain(hex);

    // A rotation's overlap end is stored, and a retired key stops opening every replica.
    const second = await admin(B, 'POST', '/consumers/db-app/keys');
    expect(second.status).toBe(201);
    recordSecret(second.json().key);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    expect((await admin(A, 'PATCH', `/consumers/db-app/keys/${keyId}`, { expiresAt: until })).status).toBe(
      200,
    );
    const exp = await db.query('SELECT expires_at FROM atrium_consumer_keys WHERE key_id = $1', [keyId]);
    expect(new Date(exp.rows[0].expires_at).toISOString()).toBe(until);
    expect((await admin(B, 'DELETE', `/consumers/db-app/keys/${keyId}`)).status).toBe(200);
    await inForce([A, B], key, 401, 'the retired key');
    await inForce([A, B], second.json().key, 200, 'the second key');
  });

  it('a change written to the database by another replica (here: by hand, with NOTIFY) is picked up', async () => {
    const [A, B] = fleet.urls;
    await db.query(
      "UPDATE atrium_consumers SET settings = jsonb_set(settings, '{enabled}', 'false') WHERE id = 'seeded-app'",
    );
    await db.query(
      "WITH v AS (UPDATE atrium_consumer_state SET version = version + 1 RETURNING version) SELECT pg_notify('atrium_consumers', version::text) FROM v",
    );
    await inForce([A, B], seeded.key, 403, 'the disabled consumer');
    expect((await admin(A, 'POST', '/consumers/seeded-app/enable')).status).toBe(200);
    await inForce([A, B], seeded.key, 200, 'the enabled consumer');
  });

  it('usage lands in the ledger in batches and /admin/usage reads any date range with SQL', async () => {
    const [A, B] = fleet.urls;
    for (let i = 0; i < 3; i++) expect((await call(A, seeded.key)).status).toBe(200);
    expect((await call(B, seeded.key)).status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    // An older day, as the ledger holds it; and one outside the range asked for.
    const old = new Date(Date.now() - 200 * 86_400_000).toISOString().slice(0, 10);
    const older = new Date(Date.now() - 300 * 86_400_000).toISOString().slice(0, 10);
    const from = new Date(Date.now() - 250 * 86_400_000).toISOString().slice(0, 10);
    await db.query(
      `INSERT INTO atrium_usage (day, consumer, upstream, requests, vendor_calls)
       VALUES ($1, 'seeded-app', 'macro', 40, 7), ($2, 'seeded-app', 'macro', 1, 1)`,
      [old, older],
    );
    await eventually(
      async () => {
        const r = await db.query(
          "SELECT requests::int AS r FROM atrium_usage WHERE day = $1 AND consumer = 'seeded-app'",
          [today],
        );
        return (r.rows[0]?.r ?? 0) >= 4;
      },
      { timeoutMs: 5_000, what: 'both replicas flushed their counts' },
    );
    const res = await admin(B, 'GET', `/usage?from=${from}&to=${today}&consumer=seeded-app`);
    expect(res.status).toBe(200);
    const report = res.json();
    expect(report.store).toBe('postgres');
    expect(report.rows.map((r: { day: string }) => r.day)).toEqual([old, today]);
    expect(report.rows[0]).toMatchObject({ requests: 40, vendorCalls: 7 });
    expect(report.rows[1].requests).toBeGreaterThanOrEqual(4);
  });

  it('a replica started later (a restart) serves the database set, not the boot file', async () => {
    let later: GatewayHandle | undefined;
    try {
      later = await startGateway({ env: fleet.env, consumers: [] });
      const list = (await admin(later.url, 'GET', '/consumers')).json();
      expect(list.source).toBe('database');
      expect(list.consumers.map((c: { id: string }) => c.id).sort()).toEqual(['db-app', 'seeded-app']);
      expect((await call(later.url, seeded.key)).status).toBe(200);
    } finally {
      await later?.close();
    }
  });

  it('an oidc block (end-user tokens) is kept in the settings JSON and in force on the other replica', async () => {
    const oidc = { issuer: 'https://login.internal.example/realms/staff', audience: ['seeded-web'] };
    const set = await admin(fleet.urls[0], 'PATCH', '/consumers/seeded-app', { oidc });
    expect(set.status).toBe(200);
    const row = await db.query(
      "SELECT settings->'oidc' AS oidc FROM atrium_consumers WHERE id = 'seeded-app'",
    );
    expect(row.rows[0].oidc).toEqual({
      ...oidc,
      algorithms: expect.arrayContaining(['RS256', 'ES256']),
      clockSkewSeconds: 30,
      jwksCooldownMs: 30_000,
    });
    await eventually(
      async () =>
        (await admin(fleet.urls[1], 'GET', '/consumers/seeded-app')).json().oidc?.issuer === oidc.issuer,
      { timeoutMs: WITHIN_MS, what: 'the oidc block on replica 1' },
    );
    expect(
      (await admin(fleet.urls[0], 'PATCH', '/consumers/seeded-app', { oidc: null })).json().oidc,
    ).toBeNull();
    const gone = await db.query(
      "SELECT settings ? 'oidc' AS has FROM atrium_consumers WHERE id = 'seeded-app'",
    );
    expect(gone.rows[0].has).toBe(false);
  });
});
