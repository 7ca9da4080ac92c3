import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { ThrottlerModule, type ThrottlerModuleOptions } from '@nestjs/throttler';
import type { SharedRedis } from '../ports/redis.port.js';
import type { Registry } from 'prom-client';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../config/atrium-config.js';
import { METRICS_REGISTRY } from '../ports/metrics.port.js';
import { REDIS_CLIENT } from '../ports/redis.port.js';
import {
  CONSUMER_THROTTLER_METRICS,
  ConsumerQuota,
  type ConsumerThrottlerMetrics,
} from './consumer-quota.service.js';
import { ConsumerThrottlerGuard } from './consumer-throttler.guard.js';
import { FixedWindowThrottlerStorage } from './fixed-window.storage.js';
import { RedisFixedWindowThrottlerStorage } from './redis-window.storage.js';
import { collectedGauge, rateLimitedCounter, redisErrorsCounter } from './throttling.metrics.js';

/** In memory for one instance; one count for the fleet in Redis when REDIS_URL is set. */
export function consumerThrottlerOptions(
  config: AtriumConfig,
  redis: SharedRedis | null,
  registry: Registry,
): ThrottlerModuleOptions {
  const errors = redisErrorsCounter(registry).labels({ component: 'throttler' });
  return {
    // Windows come from each consumer (ConsumerQuota), not from here.
    throttlers: [],
    storage: redis
      ? new RedisFixedWindowThrottlerStorage(redis, config.redisPrefix, () => errors.inc())
      : new FixedWindowThrottlerStorage(),
  };
}

/**
 * The inbound per-consumer quota: the ConsumerQuota service, and its guard, which CoreModule registers
 * globally right after ConsumerAuthGuard (it needs `req.consumer`).
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      useFactory: consumerThrottlerOptions,
      inject: [ATRIUM_CONFIG, REDIS_CLIENT, METRICS_REGISTRY],
    }),
  ],
  providers: [
    {
      provide: CONSUMER_THROTTLER_METRICS,
      useFactory: (registry: Registry): ConsumerThrottlerMetrics => ({
        rateLimited: rateLimitedCounter(registry),
      }),
      inject: [METRICS_REGISTRY],
    },
    ConsumerQuota,
    ConsumerThrottlerGuard,
  ],
  exports: [ConsumerQuota, ConsumerThrottlerGuard],
})
export class ConsumerThrottlingModule implements OnModuleInit {
  constructor(
    private readonly quota: ConsumerQuota,
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
  ) {}

  onModuleInit(): void {
    collectedGauge(
      this.registry,
      'atrium_consumer_quota_remaining',
      'Requests left in each quota window of each consumer, as last seen by this instance.',
      ['consumer', 'window'] as const,
      (set) => {
        for (const plan of this.quota.seenPlans())
          plan.windows.forEach((w, i) =>
            set({ consumer: plan.consumer.id, window: w.name }, this.quota.remainingNow(plan, i)),
          );
      },
    );
  }
}
