import { Logger, type Provider } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { METRICS_REGISTRY } from '../core/ports/metrics.port.js';
import { REDIS_CLIENT, type RedisClient } from '../core/ports/redis.port.js';
import { duplicateConnection } from '../core/redis/redis-connection.js';
import { CACHE_METRICS, CacheMetrics } from './cache-metrics.js';
import { CACHE_TTL } from './cache-ttl.js';
import { MemoryResponseStore } from './cache/memory-response.store.js';
import { cacheConnectionOptions } from './cache/redis-cache-connection.js';
import { RedisResponseStore } from './cache/redis-response.store.js';
import { RESPONSE_STORE, type ResponseStore } from './cache/response-store.js';
import { ResponseCache } from './response-cache.service.js';

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
      redis: RedisClient,
    ): Promise<ResponseStore> => {
      if (!redis) return new MemoryResponseStore({ maxBytes: config.cache.maxBytes });
      const logger = new Logger('Cache');
      const store = new RedisResponseStore({
        // The gateway's Redis client, on a connection of the cache's own (see cacheConnectionOptions).
        client: duplicateConnection(redis, cacheConnectionOptions(config.cache.redisTimeoutMs)),
        prefix: config.redisPrefix,
        timeoutMs: config.cache.redisTimeoutMs,
        leaseMs: config.cache.coalesceLeaseMs,
        indexTtlMs: longestRetentionMs(config),
        log: (level, message) => (level === 'warn' ? logger.warn(message) : logger.log(message)),
        onError: () => metrics.redisErrors.inc(),
        fallbackMaxBytes: config.cache.maxBytes,
      });
      await store.connect();
      return store;
    },
    inject: [ATRIUM_CONFIG, CACHE_METRICS, REDIS_CLIENT],
  },
  ResponseCache,
];
