import { Global, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { ReadinessService } from '../../health/readiness.service.js';
import { REDIS_CLIENT } from '../../redis/redis.module.js';
import { LIMITS_REDIS, UpstreamLimitsService } from './limits.service.js';

/** Puts each upstream's breaker, cooldown and budget into `/health/ready`. */
@Injectable()
class LimitsReadiness implements OnModuleInit {
  constructor(
    private readonly readiness: ReadinessService,
    private readonly limits: UpstreamLimitsService,
  ) {}

  onModuleInit(): void {
    this.readiness.addUpstreamFacts((name) => {
      const l = this.limits.limiter(name);
      return l ? { ...l.facts() } : {};
    });
  }
}

/** The rate-limit shield of the upstreams (budget, fairness, cooldown, AIMD, breaker, retries). */
@Global()
@Module({
  providers: [
    { provide: LIMITS_REDIS, useFactory: (redis: Redis | null) => redis, inject: [REDIS_CLIENT] },
    UpstreamLimitsService,
    LimitsReadiness,
  ],
  exports: [UpstreamLimitsService],
})
export class UpstreamLimitsModule {}
