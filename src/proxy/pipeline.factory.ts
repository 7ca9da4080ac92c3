import { Injectable } from '@nestjs/common';
import { CONSUMER_KEY_HEADERS, CONSUMER_KEY_QUERY_PARAMS } from '../core/auth/consumer.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { upstreamMetricsStage } from '../metrics/upstream-metrics.stage.js';
import { ResponseCache } from './cache/response-cache.service.js';
import { compose } from './compose.js';
import { UpstreamLimitsService } from './limits/limits.service.js';
import { retryStage } from './limits/retry.stage.js';
import { upstreamLimitStage } from './limits/upstream-limit.stage.js';
import type { Handler } from './pipeline.types.js';
import { credentialsStage } from './stages/credentials.stage.js';
import { normalizeStage } from './stages/normalize.stage.js';
import type { UpstreamDefinition } from './upstream-definition.js';

export interface PipelineSettings {
  /** `Retry-After` of an upstream 429 without a usable header: per upstream in the limits config now. */
  readonly defaultRetryAfterSeconds: number;
}

export const PIPELINE_SETTINGS = Symbol('PipelineSettings');

/**
 * The order of the pipeline, in one list (stages[0] is outermost; architecture §3). The upstream-limit and
 * retry stages slot in where the comments stand, one line each.
 */
@Injectable()
export class PipelineFactory {
  constructor(
    private readonly redactor: SecretRedactor,
    private readonly cache: ResponseCache,
    private readonly limits: UpstreamLimitsService,
    private readonly metrics: GatewayMetrics,
  ) {}

  build(def: UpstreamDefinition, transport: Handler, _settings: PipelineSettings): Handler {
    const limits = this.limits.forUpstream(def);
    return compose(
      [
        this.cache.cacheStage(def),
        this.cache.coalesceStage(def),
        upstreamLimitStage(limits.limit),
        credentialsStage({
          credentials: def.credentials,
          stripParams: CONSUMER_KEY_QUERY_PARAMS,
          stripHeaders: CONSUMER_KEY_HEADERS,
          redactor: this.redactor,
          onScrub: this.metrics.keyEchoScrubRecorder(def.name),
        }),
        retryStage(limits.retry),
        upstreamMetricsStage({ record: this.metrics.upstreamCallRecorder(def.name) }),
        // No default Retry-After here: the limits decide it (configured default, growing on repeats).
        normalizeStage({ upstream: def.name, title: def.title, mapper: def.errorMapper }),
      ],
      transport,
    );
  }
}
