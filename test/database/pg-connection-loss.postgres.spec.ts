import { Client } from 'pg';
import { createClient, createPool, migrate } from '../../src/database/database.js';
import { PgConsumerRepository } from '../../src/database/pg-consumer.repository.js';
import { eventually } from '../helpers/eventually.js';
import { databaseUrl, describePostgres } from '../helpers/postgres.js';
import { TcpRelay } from '../helpers/tcp-relay.js';

/**
 * A connection lost while the repository holds it (a write waiting on a lock when the network drops) rejects
 * that write; it must never surface as an unhandled 'error' event, which would end the gateway's process.
 */
describePostgres('a PostgreSQL connection lost in the middle of a transaction', (pg) => {
  const relay = new TcpRelay('127.0.0.1', 5432);
  let holder: Client;
  let watcher: Client;
  let repo: PgConsumerRepository;
  let pool: ReturnType<typeof createPool>;
  beforeAll(async () => {
    await migrate(pg.url);
    await relay.start();
    const u = new URL(databaseUrl(pg.name));
    u.port = String(relay.port);
    pool = createPool(u.toString());
    repo = new PgConsumerRepository(pool, () => createClient(u.toString()));
    holder = new Client({ connectionString: pg.url });
    await holder.connect();
    watcher = new Client({ connectionString: pg.url });
    await watcher.connect();
  });
  afterAll(async () => {
    await holder.end();
    await watcher.end();
    await repo.close();
    await pool.end();
    await relay.cut();
  });

  it('rejects the write, keeps the process up, and serves again once the database is back', async () => {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE atrium_consumer_state IN ACCESS EXCLUSIVE MODE');
    const outcome = repo
      .write('made-during-cut', () => ({ id: 'made-during-cut', upstreams: ['macro'] }))
      .then(
        () => 'written',
        (e: Error) => e.message,
      );
    // The write holds a pooled connection and waits on the lock: the connection is checked out. (Asked on
    // a second session: inside the holder's transaction pg_stat_activity is a snapshot.)
    await eventually(
      async () =>
        Number(
          (
            await watcher.query(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = $1",
              [pg.name],
            )
          ).rows[0].n,
        ) === 1,
      { timeoutMs: 5_000, what: 'the write waiting on the lock' },
    );
    await relay.cut();
    expect(await outcome).toMatch(/Connection terminated/);
    await holder.query('ROLLBACK');

    await relay.restore();
    await eventually(
      async () =>
        repo.snapshot().then(
          () => true,
          () => false,
        ),
      { timeoutMs: 5_000, what: 'a snapshot after the database returns' },
    );
    const rows = await holder.query("SELECT 1 FROM atrium_consumers WHERE id = 'made-during-cut'");
    expect(rows.rowCount).toBe(0);
  }, 20_000);
});
