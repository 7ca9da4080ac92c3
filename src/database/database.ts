import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Client, ClientConfig, Pool, PoolConfig } from 'pg';

/** The schema's migrations (SQL files run by node-pg-migrate), copied beside the build by copy-assets. */
export const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');
export const MIGRATIONS_TABLE = 'atrium_migrations';

/**
 * Short timeouts: a database that stops answering must fail an admin write or a usage flush in seconds,
 * never hold a request (requests never wait on it: consumers are served from memory).
 */
const CLIENT_DEFAULTS = {
  connectionTimeoutMillis: 2_000,
  query_timeout: 5_000,
  statement_timeout: 5_000,
  keepAlive: true,
} satisfies ClientConfig;

function pg(): typeof import('pg') {
  // Loaded on first use: a gateway without DATABASE_URL never holds the driver in memory.
  return createRequire(import.meta.url)('pg') as typeof import('pg');
}

export function createPool(url: string, extra: PoolConfig = {}): Pool {
  const pool = new (pg().Pool)({
    connectionString: url,
    ...CLIENT_DEFAULTS,
    max: 4,
    idleTimeoutMillis: 30_000,
    ...extra,
  });
  // An idle client losing its connection emits here; unhandled, it would end the process.
  pool.on('error', () => undefined);
  return pool;
}

export function createClient(url: string): Client {
  return new (pg().Client)({ connectionString: url, ...CLIENT_DEFAULTS });
}

/**
 * Applies the pending migrations (node-pg-migrate, SQL files; its advisory lock lets replicas booting at once
 * run them once). Returns the names of those applied.
 */
export async function migrate(url: string, log: (line: string) => void = () => undefined): Promise<string[]> {
  const { runner } = await import('node-pg-migrate');
  const client = createClient(url);
  // Losing the database mid-migration rejects the runner's query; without a listener it would also crash.
  client.on('error', () => undefined);
  await client.connect();
  try {
    const ran = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      migrationsTable: MIGRATIONS_TABLE,
      direction: 'up',
      checkOrder: true,
      singleTransaction: true,
      advisoryLockMode: 'wait',
      log: () => undefined,
      logger: { debug: () => undefined, info: () => undefined, warn: log, error: log },
    });
    return ran.map((m) => m.name);
  } finally {
    await client.end().catch(() => undefined);
  }
}
