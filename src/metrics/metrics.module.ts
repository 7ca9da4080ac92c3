import { Global, Module } from '@nestjs/common';
import { Registry } from 'prom-client';

/**
 * The one Prometheus registry of a gateway instance. Modules register their own counters and gauges on it
 * (`registers: [registry]`); a fresh registry per app keeps several apps in one test process apart.
 */
export const METRICS_REGISTRY = Symbol('MetricsRegistry');

@Global()
@Module({
  providers: [{ provide: METRICS_REGISTRY, useFactory: () => new Registry() }],
  exports: [METRICS_REGISTRY],
})
export class MetricsModule {}
