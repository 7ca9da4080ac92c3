import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../config/atrium-config.js';
import type { ProxyRequest, Stage } from '../pipeline.types.js';
import type { UpstreamDefinition } from '../upstream-definition.js';
import { CACHE_METRICS, type CacheMetrics } from './cache-metrics.js';
import type { CacheRuntime, MissContext } from './cache-runtime.js';
import { cacheStage } from './cache.stage.js';
import { coalesceStage } from './coalesce.stage.js';
import { RESPONSE_STORE, type ResponseStore, type StoreStats } from './response-store.js';

/**
 * The response cache of one gateway instance: the store (memory, or Redis when `REDIS_URL` is set), the
 * metrics, and the two pipeline stages it builds per upstream (cache, coalesce), which share per-request
 * context through a WeakMap. Also what the admin purge endpoint calls.
 */
@Injectable()
export class ResponseCache implements OnApplicationShutdown {
  private readonly runtime: CacheRuntime;

  constructor(
    @Inject(RESPONSE_STORE) readonly store: ResponseStore,
    @Inject(CACHE_METRICS) metrics: CacheMetrics,
    @Inject(ATRIUM_CONFIG) config: AtriumConfig,
  ) {
    this.runtime = {
      store,
      settings: config.cache,
      metrics,
      contexts: new WeakMap<ProxyRequest, MissContext>(),
    };
  }

  /** The `cache` slot of the pipeline. */
  cacheStage(def: Pick<UpstreamDefinition, 'name' | 'routes'>): Stage {
    return cacheStage({ upstream: def.name, routes: def.routes, runtime: this.runtime });
  }

  /** The `coalesce` slot of the pipeline. */
  coalesceStage(def: Pick<UpstreamDefinition, 'name'>): Stage {
    return coalesceStage({ upstream: def.name, runtime: this.runtime });
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
