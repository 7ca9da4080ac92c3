// Operator commands on the system of record (docs/operations.md "State"):
//   node dist/database-cli.js migrate                 apply pending migrations (npm run db:migrate)
//   node dist/database-cli.js consumers-from-redis    move the Redis-held consumer set into an empty database
//                                                     (npm run consumers:to-database)
// Both read DATABASE_URL (and REDIS_URL, ATRIUM_REDIS_PREFIX for the move) from the environment.
import { Redis } from 'ioredis';
import { parseConsumer, checkConsumerSet, toRecord } from './core/auth/consumer-record.js';
import { RedisConsumerRepository } from './core/auth/redis-consumer.repository.js';
import { UPSTREAM_NAMES } from './upstreams/index.js';
import { createClient, createPool, migrate } from './database/database.js';
import { PgConsumerRepository } from './database/pg-consumer.repository.js';

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

async function runMigrate(): Promise<void> {
  const ran = await migrate(required('DATABASE_URL'), (line) => console.error(line));
  console.log(ran.length ? `applied: ${ran.join(', ')}` : 'the database is up to date');
}

async function consumersFromRedis(): Promise<void> {
  const url = required('DATABASE_URL');
  const prefix = process.env.ATRIUM_REDIS_PREFIX || 'atrium:';
  const redis = new Redis(required('REDIS_URL'), { lazyConnect: true, maxRetriesPerRequest: 1 });
  const pool = createPool(url);
  try {
    await redis.connect();
    const snap = await new RedisConsumerRepository(redis, prefix).snapshot();
    // Validated as the gateway would load them: a set it would refuse is not moved.
    const consumers = snap.values.map((v, i) => parseConsumer(JSON.parse(v), i, UPSTREAM_NAMES));
    checkConsumerSet(consumers);
    await migrate(url, (line) => console.error(line));
    const repo = new PgConsumerRepository(pool, () => createClient(url));
    const moved = await repo.seed(consumers.map(toRecord), {
      actor: 'consumers-from-redis',
      action: 'consumers.import',
      detail: { from: `redis ${prefix}consumers`, redisVersion: snap.version },
    });
    if (!moved) {
      console.error(
        'the database already holds consumers: nothing was moved (it is the source of truth now)',
      );
      process.exitCode = 1;
      return;
    }
    console.log(
      `moved ${consumers.length} consumer(s) from Redis (${prefix}consumers, version ${snap.version}) ` +
        'into the database; the Redis copy is left as it was and no longer read once DATABASE_URL is set',
    );
  } finally {
    redis.disconnect();
    await pool.end();
  }
}

const commands: Record<string, () => Promise<void>> = {
  migrate: runMigrate,
  'consumers-from-redis': consumersFromRedis,
};

const name = process.argv[2] ?? '';
const command = commands[name];
if (!command) {
  console.error(`usage: node dist/database-cli.js <${Object.keys(commands).join(' | ')}>`);
  process.exit(2);
}
command().catch((e: unknown) => {
  console.error(`${name} failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
