import { Injectable, Logger, type OnModuleInit, type Provider } from '@nestjs/common';
import type { Registry } from 'prom-client';
import type { Redis } from 'ioredis';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../config/atrium-config.js';
import { ReadinessService } from '../../health/readiness.service.js';
import { METRICS_REGISTRY } from '../../metrics/metrics.tokens.js';
import { REDIS_CLIENT } from '../../redis/redis.tokens.js';
import { CACHE_TTL } from '../cache-ttl.js';
import { CACHE_METRICS, CacheMetrics } from './cache-metrics.js';
import { MemoryResponseStore } from './memory-response.store.js';
import { cacheConnectionOptions } from './redis-cache-connection.js';
import { RedisResponseStore } from './redis-response.store.js';
import { ResponseCache } from './response-cache.service.js';
import { RESPONSE_STORE, type ResponseStore } from './response-store.js';

/** Shows the cache in `/health/ready`. Informational: a cache in trouble degrades to the upstream. */
@Injectable()
class CacheReadiness implements OnModuleInit {
  constructor(
    private readonly readiness: ReadinessService,
    private readonly cache: ResponseCache,
  ) {}

  onModuleInit(): void {
    this.readiness.addContributor({
      name: 'cache',
      check: async () => ({ ok: true, details: await this.cache.stats() }),
    });
  }
}

/** Longest time any entry may be kept: the invalidation index of a scope must outlive its entries. */
function longestRetentionMs(config: AtriumConfig): number {
  const ttls = [...Object.values(CACHE_TTL), ...Object.values(config.cache.ttlOverrides)];
  const c = config.cache;
  return Math.max(...ttls) + Math.max(c.staleWhileRevalidateMs, c.staleIfErrorMs) + 60_000;
}

/** Providers of the response cache (added to the ProxyModule). */
export const RESPONSE_CACHE_PROVIDERS: Provider[] = [
  {
    provide: CACHE_METRICS,
    useFactory: (registry: Registry) => new CacheMetrics(registry),
    inject: [METRICS_REGISTRY],
  },
  {
    provide: RESPONSE_STORE,
    useFactory: async (
      config: AtriumConfig,
      metrics: CacheMetrics,
      redis: Redis | null,
    ): Promise<ResponseStore> => {
      if (!redis) return new MemoryResponseStore({ maxBytes: config.cache.maxBytes });
      const logger = new Logger('Cache');
      const store = new RedisResponseStore({
        // The gateway's Redis client, on a connection of the cache's own (see cacheConnectionOptions).
        client: redis.duplicate(cacheConnectionOptions(config.cache.redisTimeoutMs)),
        prefix: config.redisPrefix,
        timeoutMs: config.cache.redisTimeoutMs,
        leaseMs: config.cache.coalesceLeaseMs,
        indexTtlMs: longestRetentionMs(config),
        log: (level, message) => (level === 'warn' ? logger.warn(message) : logger.log(message)),
        onError: () => metrics.redisErrors.inc(),
      });
      await store.connect();
      return store;
    },
    inject: [ATRIUM_CONFIG, CACHE_METRICS, REDIS_CLIENT],
  },
  ResponseCache,
  CacheReadiness,
];
