import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { describeNeeding, TEST_POSTGRES_URL } from './system-parts.js';

export { TEST_POSTGRES_URL };

export interface PostgresTestContext {
  /** A database of its own (created in beforeAll, dropped in afterAll): set in beforeAll. */
  url: string;
  name: string;
}

/** The URL of another database on the same server. */
export function databaseUrl(name: string, base = TEST_POSTGRES_URL): string {
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: TEST_POSTGRES_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * A describe block that needs a real PostgreSQL, with a uniquely named database of its own. Without one it
 * fails under ATRIUM_REQUIRE_POSTGRES=1 (CI) and is skipped with a loud line elsewhere (system-parts.ts).
 */
export function describePostgres(name: string, fn: (ctx: PostgresTestContext) => void): void {
  const ctx: PostgresTestContext = { url: '', name: `atrium_test_${randomBytes(6).toString('hex')}` };
  describeNeeding('postgres', name, () => {
    beforeAll(async () => {
      await admin((c) => c.query(`CREATE DATABASE ${ctx.name}`));
      ctx.url = databaseUrl(ctx.name);
    });
    // Nested: every hook of the tests (gateways closing their pools) runs before the database goes.
    describe(`(database ${ctx.name})`, () => fn(ctx));
    afterAll(async () => {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${ctx.name} WITH (FORCE)`));
    });
  });
}

/**
 * A client of a describe block's own database, connected before its tests and closed after them (declare
 * it inside the `describePostgres` block): the tests read what the gateway wrote.
 */
export function databaseClient(ctx: PostgresTestContext): Pick<Client, 'query'> {
  let client: Client | undefined;
  beforeAll(async () => {
    client = new Client({ connectionString: ctx.url });
    await client.connect();
  });
  afterAll(() => client?.end());
  const query = (...args: unknown[]): unknown =>
    (client!.query as (...a: unknown[]) => unknown).apply(client, args);
  return { query: query as Client['query'] };
}
