import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { toRecord } from '../../src/core/auth/consumer-record.js';
import { RedisConsumerRepository } from '../../src/core/auth/redis-consumer.repository.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http, type HttpResult, withGateway } from '../helpers/gateway.js';
import { databaseClient, databaseUrl, describePostgres } from '../helpers/postgres.js';
import { SYSTEM_PARTS, TEST_REDIS_URL } from '../helpers/system-parts.js';
import { writeSuiteResults } from '../helpers/results.js';
import { TcpRelay } from '../helpers/tcp-relay.js';

const TOKEN = 'sbx_macro_db_loss_0c6e';
const OPERATOR = 'operator-token-db-loss-72ad';
/** The database is away this long: an outage, not a blip. */
const GAP_MS = 30_000;

describePostgres(
  'losing the database: authentication goes on, admin writes 503, usage waits and lands once',
  (pg) => {
    const app = testConsumer({ id: 'steady-app', upstreams: new Set(['macro']) });
    const fake = new FakeMacroUpstream({ token: TOKEN });
    // The gateway reaches PostgreSQL through a relay the test cuts (the database down for the gateway alone).
    const relay = new TcpRelay('127.0.0.1', 5432);
    beforeAll(() => relay.start());
    afterAll(() => relay.cut());
    const gw = withGateway({
      upstreams: { macro: { fake, token: TOKEN } },
      env: () => {
        const u = new URL(databaseUrl(pg.name));
        u.port = String(relay.port);
        return { DATABASE_URL: u.toString(), ATRIUM_OPERATOR_TOKEN: OPERATOR };
      },
      consumers: [app],
    });
    const db = databaseClient(pg);

    let n = 0;
    const call = (): Promise<HttpResult> =>
      http(`${gw.url}/macro/series/${++n}`, { headers: { authorization: `Bearer ${app.key}` } });
    const create = (id: string) =>
      http(`${gw.url}/admin/consumers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, upstreams: ['macro'] }),
      });
    const ledger = async (): Promise<number> =>
      Number(
        (
          await db.query(
            "SELECT coalesce(sum(requests), 0) AS n FROM atrium_usage WHERE consumer = 'steady-app'",
          )
        ).rows[0].n,
      );

    it('keeps serving the last consumer set, refuses admin writes with 503, and writes every usage row on return', async () => {
      let sent = 0;
      for (let i = 0; i < 5; i++, sent++) expect((await call()).status).toBe(200);
      await eventually(async () => (await ledger()) === sent, { timeoutMs: 5_000, what: 'the first counts' });

      await relay.cut();
      const cutAt = Date.now();
      let longest = 0;
      const failed: number[] = [];
      while (Date.now() - cutAt < GAP_MS) {
        const t0 = Date.now();
        const res = await call();
        longest = Math.max(longest, Date.now() - t0);
        if (res.status !== 200) failed.push(res.status);
        sent++;
      }
      expect(failed).toEqual([]);
      const refused = await create('made-while-down');
      expect(refused.status).toBe(503);
      expect(refused.json()).toMatchObject({ error: { code: 'UPSTREAM_UNAVAILABLE' } });
      expect(JSON.stringify(refused.json())).toContain('PostgreSQL');

      await relay.restore();
      const backAt = Date.now();
      // Every row counted during the gap lands, none twice; admin writes work again without a restart.
      await eventually(async () => (await ledger()) === sent, {
        timeoutMs: 5_000,
        what: 'the buffered counts',
      });
      await eventually(async () => (await create('made-after')).status === 201, {
        timeoutMs: 5_000,
        what: 'admin writes after the database returns',
      });
      const backMs = Date.now() - backAt;
      const lost = sent - (await ledger());
      // The hardening summary's state-fault rows (printed by `npm run test:hardening` and a full `npm test`).
      const failures = [
        ...(failed.length ? [`${failed.length} requests not answered 200`] : []),
        ...(lost ? [`${lost} usage rows lost`] : []),
        ...(longest >= 1_000 ? [`longest request ${longest} ms`] : []),
        ...(backMs > 5_000 ? [`back to normal only after ${backMs} ms`] : []),
      ];
      writeSuiteResults({
        suite: 'database',
        finishedAt: new Date().toISOString(),
        durationMs: Date.now() - cutAt,
        counters: {
          stateFaultsTotal: 1,
          stateFaultsSurvived: failures.length === 0 ? 1 : 0,
          gateway5xx: failed.filter((s) => s >= 500).length,
          stateRowsLost: Math.abs(lost),
          faultsSharedAfter5s: backMs > 5_000 ? 1 : 0,
        },
        cases: [{ name: `PostgreSQL gone ${GAP_MS} ms`, survived: failures.length === 0, failures }],
      });
      expect(lost).toBe(0);
      const metrics = (await http(`${gw.url}/metrics`)).text;
      expect(metrics).toMatch(/^atrium_usage_rows_dropped_total 0$/m);
      expect((await db.query("SELECT 1 FROM atrium_consumers WHERE id = 'made-while-down'")).rowCount).toBe(
        0,
      );
      // The closing figures of the fault (docs/operations.md "Losing the database").
      console.log(
        `database gone ${GAP_MS} ms: ${sent} requests, 0 gateway 5xx, longest ${longest} ms, ` +
          `usage rows lost 0, back to normal in ${backMs} ms`,
      );
      expect(longest).toBeLessThan(1_000);
    }, 60_000);
  },
);

describePostgres(
  'npm run consumers:to-database moves a Redis-held consumer set into an empty database',
  (pg) => {
    const hasRedis = SYSTEM_PARTS.redis.missing() === undefined;
    const prefix = `atrium-test:${Date.now().toString(36)}:`;
    const one = testConsumer({ id: 'redis-app', upstreams: new Set(['macro']), write: true });
    const two = testConsumer({ id: 'redis-app-2', upstreams: new Set(['deals']) });
    let redis: Redis;
    beforeAll(async () => {
      if (!hasRedis) throw new Error(`this test needs Redis at ${TEST_REDIS_URL}`);
      redis = new Redis(TEST_REDIS_URL);
      expect(
        await new RedisConsumerRepository(redis, prefix).seed([
          toRecord(one.consumer),
          toRecord(two.consumer),
        ]),
      ).toBe(true);
    });
    afterAll(async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });
    const run = () =>
      spawnSync(process.execPath, [join(__dirname, '../../dist/database-cli.js'), 'consumers-from-redis'], {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: pg.url,
          REDIS_URL: TEST_REDIS_URL,
          ATRIUM_REDIS_PREFIX: prefix,
        },
        encoding: 'utf8',
        timeout: 20_000,
      });

    it('moves every consumer with its key digests once, with an audit row, and refuses a second time', async () => {
      const first = run();
      expect(first.stderr).toBe('');
      expect(first.status).toBe(0);
      expect(first.stdout).toContain('moved 2 consumer(s)');
      const db = new Client({ connectionString: pg.url });
      await db.connect();
      try {
        const rows = await db.query(
          "SELECT c.id, c.settings->'write' AS write, encode(k.sha256, 'hex') AS h FROM atrium_consumers c JOIN atrium_consumer_keys k ON k.consumer_id = c.id ORDER BY c.id",
        );
        expect(rows.rows).toEqual([
          { id: 'redis-app', write: true, h: one.consumer.keyHashes[0].toString('hex') },
          { id: 'redis-app-2', write: false, h: two.consumer.keyHashes[0].toString('hex') },
        ]);
        const audit = await db.query('SELECT action FROM atrium_audit');
        expect(audit.rows).toEqual([{ action: 'consumers.import' }]);
      } finally {
        await db.end();
      }
      const second = run();
      expect(second.status).toBe(1);
      expect(second.stderr).toContain('already holds consumers');
    });
  },
);
