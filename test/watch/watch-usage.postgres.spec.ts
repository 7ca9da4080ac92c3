import { randomBytes } from 'node:crypto';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http, withGateway } from '../helpers/gateway.js';
import { databaseClient, describePostgres } from '../helpers/postgres.js';
import { SseClient } from '../helpers/sse.js';
import { TEST_REDIS_URL } from '../helpers/system-parts.js';
import { ScriptedVendor } from '../helpers/scripted-vendor.js';

const enc = encodeURIComponent;
const PATH = '/macro/series/81/data';

/**
 * Two replicas sharing Redis, the usage ledger in PostgreSQL: each poll of a watched resource is counted
 * once for each consumer who watches it (`watch_polls`), on whichever replica it watches from, and never
 * twice for a consumer watching it through both; a consumer who watches nothing gets none. The polls' own
 * vendor calls stay under the consumer `watch`.
 */
describePostgres('GET /watch: usage per watching consumer in the ledger', (db) => {
  const vendor = new ScriptedVendor();
  const both = testConsumer({ id: 'usage-both' });
  const one = testConsumer({ id: 'usage-one' });
  const idle = testConsumer({ id: 'usage-idle' });
  const gw = withGateway({
    upstreams: { macro: { fake: vendor, token: 'sbx_test_macro_watch_usage_vendor' } },
    consumers: [both, one, idle],
    instances: 2,
    env: () => ({
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      ATRIUM_REDIS_PREFIX: `atrium-test:${randomBytes(6).toString('hex')}:`,
      ATRIUM_CACHE_TTL_OVERRIDES: 'series=300ms',
      ATRIUM_WATCH_MIN_INTERVAL_MS: '50',
      ATRIUM_WATCH_LEASE_MS: '600',
      ATRIUM_CACHE_REDIS_TIMEOUT_MS: '2000',
      ATRIUM_REDIS_COMMAND_TIMEOUT_MS: '2000',
    }),
    hookTimeoutMs: 60_000,
  });
  const sql = databaseClient(db);
  const polls = async (): Promise<number> => {
    let n = 0;
    for (const base of gw.urls)
      for (const line of (await http(`${base}/metrics`)).text.split('\n'))
        if (line.startsWith('atrium_watch_polls_total{') && !line.includes('"deferred"'))
          n += Number(line.split(' ').pop());
    return n;
  };
  const resources = async (): Promise<number> => {
    let n = 0;
    for (const base of gw.urls)
      for (const line of (await http(`${base}/metrics`)).text.split('\n'))
        if (line.startsWith('atrium_watch_resources{')) n += Number(line.split(' ').pop());
    return n;
  };

  it('counts each poll once per watching consumer, across replicas', async () => {
    vendor.set('/series/81/data', 1);
    const open = async (base: string, key: string) => {
      const c = await SseClient.open(`${base}/watch?path=${enc(PATH)}`, { authorization: `Bearer ${key}` });
      expect(c.status).toBe(200);
      await c.nth(1, (e) => e.event === 'answer');
      return c;
    };
    const streams = [
      await open(gw.urls[0], both.key),
      await open(gw.urls[1], both.key),
      await open(gw.urls[1], one.key),
    ];
    // Polls made before the last watcher was there (it is counted from the next one, or the one after).
    const before = await polls();
    await eventually(() => vendor.callsTo('/series/81/data') >= 8, { what: 'polls', timeoutMs: 20_000 });
    for (const s of streams) s.close();
    // No watcher left: the polls stop, and their count is final.
    await eventually(async () => (await resources()) === 0, { what: 'the resource dropped' });
    const made = await polls();
    const row = async (consumer: string) =>
      (
        await sql.query<{ watch_polls: string; vendor_calls: string }>(
          `SELECT watch_polls, vendor_calls FROM atrium_usage WHERE consumer = $1 AND upstream = 'macro'`,
          [consumer],
        )
      ).rows[0];
    // The ledger is written about once a second: wait for both watchers' counts.
    const expected = { both: made - 1, one: made - before - 2 };
    await eventually(
      async () =>
        Number((await row(both.consumer.id))?.watch_polls ?? 0) >= expected.both &&
        Number((await row(one.consumer.id))?.watch_polls ?? 0) >= expected.one,
      { what: 'the watch polls in the ledger' },
    );
    const counted = {
      both: Number((await row(both.consumer.id)).watch_polls),
      one: Number((await row(one.consumer.id)).watch_polls),
    };
    process.stderr.write(
      `[watch figures] ${made} polls of one resource watched by ${both.consumer.id} (on both replicas) and ${one.consumer.id}: ` +
        `(${before} before ${one.consumer.id} came): ledger watch_polls ${both.consumer.id} ${counted.both}, ${one.consumer.id} ${counted.one}\n`,
    );
    // Once per poll: a consumer watching through two replicas is not counted twice (that would be 2 × made).
    expect(counted.both).toBeLessThanOrEqual(made);
    expect(counted.one).toBeLessThanOrEqual(made);
    // The consumer who watched nothing has no watch polls; the vendor calls of the polls are the poller's.
    expect(Number((await row(idle.consumer.id))?.watch_polls ?? 0)).toBe(0);
    await eventually(async () => Number((await row('watch'))?.vendor_calls ?? 0) > 0, {
      what: "the poller's vendor calls",
    });
  });
});
