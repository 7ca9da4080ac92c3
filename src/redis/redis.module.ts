import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { Redis } from 'ioredis';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { ReadinessService } from '../health/readiness.service.js';
import { REDIS_CLIENT } from './redis.tokens.js';

export { REDIS_CLIENT };

export function createRedisClient(url: string): Redis {
  return new Redis(url, {
    // Short timeouts and no offline queue: a slow or absent Redis must fail a call fast, never stall a request.
    connectTimeout: 1000,
    commandTimeout: 250,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
  });
}

@Injectable()
class RedisLifecycle implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Redis');

  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: Redis | null,
    private readonly readiness: ReadinessService,
  ) {}

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
    this.readiness.addContributor({
      name: 'redis',
      check: async () => {
        try {
          const started = performance.now();
          await this.redis!.ping();
          return { ok: true, details: { latencyMs: Math.round(performance.now() - started) } };
        } catch (e) {
          return { ok: false, details: { error: (e as Error).message } };
        }
      },
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

@Global()
@Module({
  providers: [
    {
      provide: REDIS_CLIENT,
      useFactory: (c: AtriumConfig): Redis | null => (c.redisUrl ? createRedisClient(c.redisUrl) : null),
      inject: [ATRIUM_CONFIG],
    },
    RedisLifecycle,
  ],
  exports: [REDIS_CLIENT],
})
export class RedisModule {}
