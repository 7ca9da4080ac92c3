import { Global, Module } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { GatewayMetrics } from './gateway-metrics.js';
import { MetricsController } from './metrics.controller.js';
import { METRICS_REGISTRY, UPSTREAM_METRICS } from '../core/ports/metrics.port.js';
import { RequestObserver } from './request-observer.js';
import { UpstreamTimings } from './upstream-timings.js';

export { METRICS_REGISTRY } from '../core/ports/metrics.port.js';

function createRegistry(): Registry {
  const registry = new Registry();
  // Process metrics (CPU, memory, event-loop lag, GC, handles) with the usual names, on this registry only.
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * Metrics: the one Prometheus registry of a gateway instance (other modules register their own counters
 * and gauges on it), the gateway's request and upstream metrics, and `GET /metrics`. A fresh registry per
 * app keeps several apps in one test process apart. Provides the metrics port (core/ports/metrics.port.ts):
 * global because core and proxy reach it through those tokens and may not import this module.
 */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [
    { provide: METRICS_REGISTRY, useFactory: createRegistry },
    UpstreamTimings,
    GatewayMetrics,
    { provide: UPSTREAM_METRICS, useExisting: GatewayMetrics },
    RequestObserver,
  ],
  exports: [METRICS_REGISTRY, UPSTREAM_METRICS, GatewayMetrics, UpstreamTimings, RequestObserver],
})
export class MetricsModule {}
