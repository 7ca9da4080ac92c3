import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { Client } from 'pg';

/** The server the PostgreSQL tests use: TEST_POSTGRES_URL, else the local one (trust auth). */
export const TEST_POSTGRES_URL =
  process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

let cached: boolean | undefined;

/** Synchronous check (Jest decides skips when it collects tests, before any hook runs). */
export function postgresAnswers(url = TEST_POSTGRES_URL): boolean {
  if (cached !== undefined) return cached;
  const script = `
    const { Client } = require('pg');
    const c = new Client({ connectionString: ${JSON.stringify(url)}, connectionTimeoutMillis: 1500 });
    c.connect().then(() => c.query('SELECT 1')).then(() => process.exit(0), () => process.exit(1));`;
  cached = spawnSync(process.execPath, ['-e', script], { timeout: 4000, cwd: __dirname }).status === 0;
  return cached;
}

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
 * fails under ATRIUM_REQUIRE_POSTGRES=1 (CI) and is skipped with a loud message elsewhere.
 */
export function describePostgres(name: string, fn: (ctx: PostgresTestContext) => void): void {
  const ctx: PostgresTestContext = { url: '', name: `atrium_test_${randomBytes(6).toString('hex')}` };
  if (postgresAnswers()) {
    describe(name, () => {
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
    return;
  }
  if (process.env.ATRIUM_REQUIRE_POSTGRES === '1') {
    describe(name, () => {
      it('needs PostgreSQL', () => {
        throw new Error(
          `PostgreSQL is required (ATRIUM_REQUIRE_POSTGRES=1) but does not answer at ${TEST_POSTGRES_URL}`,
        );
      });
    });
    return;
  }
  console.warn(
    `\n*** SKIPPING "${name}": no PostgreSQL at ${TEST_POSTGRES_URL} (start it or set TEST_POSTGRES_URL) ***\n`,
  );
  // Skipped only off CI without PostgreSQL (announced above); under ATRIUM_REQUIRE_POSTGRES=1 it fails.
  describe.skip(name, () => fn(ctx));
}
