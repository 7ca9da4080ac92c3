import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { CACHE_METRICS, type CacheEventCounters, type CacheMetrics } from './cache-metrics.js';
import type { CacheSettings } from './cache/cache-settings.js';
import { RESPONSE_STORE, type ResponseStore, type StoreStats } from './cache/response-store.js';

/** What the cache and coalescing stages of one upstream are built with (pipeline.ts). */
export interface CacheStageParts {
  readonly store: ResponseStore;
  readonly settings: CacheSettings;
  readonly events: CacheEventCounters;
}

/**
 * The response cache of one gateway instance: the store (memory, or Redis when `REDIS_URL` is set), its
 * settings and metrics, which the cache and coalescing stages of every upstream are built with. Also what
 * the admin purge endpoint calls and what readiness reads.
 */
@Injectable()
export class ResponseCache implements OnApplicationShutdown {
  readonly settings: CacheSettings;

  constructor(
    @Inject(RESPONSE_STORE) readonly store: ResponseStore,
    @Inject(CACHE_METRICS) private readonly metrics: CacheMetrics,
    @Inject(ATRIUM_CONFIG) config: AtriumConfig,
  ) {
    this.settings = config.cache;
  }

  /** Store, settings and the upstream's event counters, for its cache and coalescing stages. */
  stageOptions(upstream: string): CacheStageParts {
    return { store: this.store, settings: this.settings, events: this.metrics.forUpstream(upstream) };
  }

  /** Drops cached answers of an upstream, optionally only below an upstream path prefix. */
  purge(upstream: string, pathPrefix?: string): Promise<number> {
    return this.store.purge(upstream, pathPrefix);
  }

  stats(): Promise<StoreStats> {
    return this.store.stats();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
