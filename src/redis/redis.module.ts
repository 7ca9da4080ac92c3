import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { createRequire } from 'node:module';
import { ATRIUM_CONFIG, type AtriumConfig, type RedisConnectionConfig } from '../config/atrium-config.js';
import { REDIS_CLIENT, type RedisClient, type SharedRedis } from '../core/ports/redis.port.js';

export { REDIS_CLIENT } from '../core/ports/redis.port.js';

/** The client's options for a connection: one server by URL, the master named by sentinels, or a node. */
export function redisOptions(c: RedisConnectionConfig): RedisOptions {
  const base: RedisOptions = {
    // Short timeouts and no offline queue: a slow or absent Redis must fail a call fast, never stall a request.
    connectTimeout: 1000,
    commandTimeout: c.commandTimeoutMs,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
  };
  if (c.kind === 'url')
    return {
      ...base,
      ...(c.username ? { username: c.username } : {}),
      ...(c.password ? { password: c.password } : {}),
    };
  if (c.kind === 'cluster')
    return {
      ...base,
      ...(c.username ? { username: c.username } : {}),
      ...(c.password ? { password: c.password } : {}),
      ...(c.tls ? { tls: {} } : {}),
    };
  return {
    ...base,
    sentinels: c.sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: c.master,
    ...(c.username ? { username: c.username } : {}),
    ...(c.password ? { password: c.password } : {}),
    ...(c.sentinelPassword ? { sentinelPassword: c.sentinelPassword } : {}),
    ...(c.tls ? { tls: {}, enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
    // After a failover the sentinels name the new master; a replica answering READONLY means reconnect.
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
  };
}

/**
 * A Cluster: the per-node settings above, with the same fail-fast policy for the cluster as a whole. While
 * slots move (a failover), a command is retried after a short delay within its own timeout, not queued.
 */
export function clusterOptions(c: RedisConnectionConfig & { kind: 'cluster' }): ClusterOptions {
  const { retryStrategy, enableOfflineQueue, lazyConnect, ...perNode } = redisOptions(c);
  return {
    enableOfflineQueue,
    lazyConnect,
    clusterRetryStrategy: retryStrategy ?? undefined,
    retryDelayOnFailover: 50,
    retryDelayOnClusterDown: 50,
    retryDelayOnTryAgain: 50,
    slotsRefreshTimeout: 1000,
    // The nodes announce their addresses; behind TLS the certificate names the host asked for, not the IP.
    ...(c.tls
      ? { dnsLookup: (address: string, done: (e: null, a: string) => void) => done(null, address) }
      : {}),
    redisOptions: perNode,
  };
}

export function createRedisClient(url: string): Redis;
export function createRedisClient(connection: RedisConnectionConfig): SharedRedis;
export function createRedisClient(connection: string | RedisConnectionConfig): SharedRedis {
  // Loaded on first use: a gateway without Redis never holds the client library in memory.
  const { Redis: RedisClass, Cluster } = createRequire(import.meta.url)(
    'ioredis',
  ) as typeof import('ioredis');
  const c: RedisConnectionConfig =
    typeof connection === 'string' ? { kind: 'url', url: connection, commandTimeoutMs: 250 } : connection;
  if (c.kind === 'cluster')
    return new Cluster(
      c.nodes.map((n) => ({ host: n.host, port: n.port })),
      clusterOptions(c),
    );
  const options = redisOptions(c);
  return c.kind === 'url' ? new RedisClass(c.url, options) : new RedisClass(options);
}

@Injectable()
class RedisLifecycle implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Redis');

  constructor(@Inject(REDIS_CLIENT) private readonly redis: RedisClient) {}

  onModuleInit(): void {
    if (!this.redis) return;
    let down = false;
    // ioredis emits an error per failed reconnect; log transitions, not every attempt.
    this.redis.on('error', (e: Error) => {
      if (!down) this.logger.warn(`Redis unavailable: ${e.message}`);
      down = true;
    });
    this.redis.on('ready', () => {
      if (down) this.logger.log('Redis is back');
      down = false;
    });
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}

/**
 * The Redis adapter: provides the REDIS_CLIENT port (core/ports) and owns the client's lifecycle. Global
 * because core (the consumer throttler) and proxy (the limits) reach it through the port token and may not
 * import this module; readiness pings it through the same token.
 */
@Global()
@Module({
  providers: [
    {
      provide: REDIS_CLIENT,
      useFactory: (c: AtriumConfig): RedisClient => (c.redis ? createRedisClient(c.redis) : null),
      inject: [ATRIUM_CONFIG],
    },
    RedisLifecycle,
  ],
  exports: [REDIS_CLIENT],
})
export class RedisModule {}
