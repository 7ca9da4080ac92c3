import { Module } from '@nestjs/common';
import { ProxyModule } from '../proxy/proxy.module.js';
import { HealthController } from './health.controller.js';
import { ReadinessService } from './readiness.service.js';

/** `/health/live` and `/health/ready`; readiness pulls its facts from the proxy (and the Redis port). */
@Module({
  imports: [ProxyModule],
  controllers: [HealthController],
  providers: [ReadinessService],
  exports: [ReadinessService],
})
export class HealthModule {}
