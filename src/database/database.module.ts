import { Global, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { CONSUMER_DATABASE, type ConsumerDatabaseClient } from '../core/ports/consumer-database.port.js';
import { createClient, createPool, migrate } from './database.js';
import { PgConsumerRepository } from './pg-consumer.repository.js';

/** The pool of the system of record, or null without DATABASE_URL (the usage ledger reads it). */
export const DATABASE_POOL = Symbol('DatabasePool');
export type DatabasePool = Pool | null;

/** Waits for boot migrations before the first query; a database away at boot is retried by the next one. */
export type DatabaseReady = () => Promise<void>;
export const DATABASE_READY = Symbol('DatabaseReady');

function readiness(config: AtriumConfig, logger: Logger): DatabaseReady {
  const db = config.database;
  if (!db?.migrateAtBoot) return () => Promise.resolve();
  let done: Promise<void> | undefined;
  return () => {
    done ??= migrate(db.url, (line) => logger.warn(line)).then(
      (ran) => {
        if (ran.length) logger.log(`database migrations applied: ${ran.join(', ')}`);
      },
      (e: unknown) => {
        done = undefined; // tried again by the next caller
        throw e;
      },
    );
    return done;
  };
}

@Injectable()
class DatabaseLifecycle implements OnApplicationShutdown {
  constructor(@Inject(DATABASE_POOL) private readonly pool: DatabasePool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool?.end().catch(() => undefined);
  }
}

/**
 * PostgreSQL (DATABASE_URL): the consumers' system of record (the CONSUMER_DATABASE port core reads) and the
 * usage ledger's pool. Pending migrations run before the first query (ATRIUM_DATABASE_MIGRATE=boot).
 */
@Global()
@Module({
  providers: [
    {
      provide: DATABASE_READY,
      useFactory: (c: AtriumConfig): DatabaseReady => readiness(c, new Logger('Database')),
      inject: [ATRIUM_CONFIG],
    },
    {
      provide: DATABASE_POOL,
      useFactory: (c: AtriumConfig): DatabasePool => (c.database ? createPool(c.database.url) : null),
      inject: [ATRIUM_CONFIG],
    },
    {
      provide: CONSUMER_DATABASE,
      useFactory: (c: AtriumConfig, pool: DatabasePool, ready: DatabaseReady): ConsumerDatabaseClient =>
        c.database && pool
          ? new PgConsumerRepository(pool, () => createClient(c.database!.url), ready)
          : null,
      inject: [ATRIUM_CONFIG, DATABASE_POOL, DATABASE_READY],
    },
    DatabaseLifecycle,
  ],
  exports: [DATABASE_POOL, DATABASE_READY, CONSUMER_DATABASE],
})
export class DatabaseModule {}
