import { Injectable } from '@nestjs/common';
import { CONSUMER_KEY_HEADERS, CONSUMER_KEY_QUERY_PARAMS } from '../core/auth/consumer.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { upstreamMetricsStage } from '../metrics/upstream-metrics.stage.js';
import { compose } from './compose.js';
import type { Handler } from './pipeline.types.js';
import { credentialsStage } from './stages/credentials.stage.js';
import { normalizeStage } from './stages/normalize.stage.js';
import type { UpstreamDefinition } from './upstream-definition.js';

export interface PipelineSettings {
  readonly defaultRetryAfterSeconds: number;
}

export const PIPELINE_SETTINGS = Symbol('PipelineSettings');

/**
 * The order of the pipeline, in one list (stages[0] is outermost; architecture §3). The cache, coalescing,
 * upstream-limit and retry stages slot in where the comments stand, one line each.
 */
@Injectable()
export class PipelineFactory {
  constructor(
    private readonly redactor: SecretRedactor,
    private readonly metrics: GatewayMetrics,
  ) {}

  build(def: UpstreamDefinition, transport: Handler, settings: PipelineSettings): Handler {
    return compose(
      [
        // cache
        // coalesce
        // upstream-limit
        credentialsStage({
          credentials: def.credentials,
          stripQuery: CONSUMER_KEY_QUERY_PARAMS,
          stripHeaders: CONSUMER_KEY_HEADERS,
          redactor: this.redactor,
          onScrub: this.metrics.keyEchoScrubRecorder(def.name),
        }),
        // retry
        upstreamMetricsStage({ record: this.metrics.upstreamCallRecorder(def.name) }),
        normalizeStage({
          upstream: def.name,
          title: def.title,
          mapper: def.errorMapper,
          defaultRetryAfterSeconds: settings.defaultRetryAfterSeconds,
        }),
      ],
      transport,
    );
  }
}
