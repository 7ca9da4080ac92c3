import { Inject, Injectable } from '@nestjs/common';
import { CONSUMER_KEY_HEADERS, CONSUMER_KEY_QUERY_PARAMS } from '../core/auth/consumer.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { upstreamMetricsStage } from '../metrics/upstream-metrics.stage.js';
import { ResponseCache } from './cache/response-cache.service.js';
import { compose } from './compose.js';
import { UpstreamLimitsService, type UpstreamLimitStages } from './limits/limits.service.js';
import { retryStage } from './limits/retry.stage.js';
import { upstreamLimitStage } from './limits/upstream-limit.stage.js';
import { LinkRewriter } from './links/link-rewriter.js';
import { LinkSigner } from './links/link-signer.js';
import type { Handler, Stage } from './pipeline.types.js';
import { credentialsStage } from './stages/credentials.stage.js';
import { keyEchoStage } from './stages/key-echo.stage.js';
import { normalizeStage } from './stages/normalize.stage.js';
import type { UpstreamDefinition } from './upstream-definition.js';
import { TRACING_STAGES, type TracingStages } from '../tracing/tracing.tokens.js';
import { USAGE_STAGES, type UsageStages } from '../usage/usage.tokens.js';

export interface PipelineSettings {
  /** `Retry-After` of an upstream 429 without a usable header: per upstream in the limits config now. */
  readonly defaultRetryAfterSeconds: number;
}

export const PIPELINE_SETTINGS = Symbol('PipelineSettings');
/** The LinkSigner of gateway-signed download links (README "Key custody"). */
export const LINK_SIGNER = Symbol('LinkSigner');

/**
 * The order of the pipeline, in one list (stages[0] is outermost; architecture §3). The upstream-limit and
 * retry stages slot in where the comments stand, one line each.
 */
@Injectable()
export class PipelineFactory {
  /** One limiter per upstream, shared by its pipeline and its signed-link pipeline. */
  private readonly limitStages = new WeakMap<UpstreamDefinition, UpstreamLimitStages>();

  constructor(
    private readonly redactor: SecretRedactor,
    private readonly cache: ResponseCache,
    private readonly limits: UpstreamLimitsService,
    private readonly metrics: GatewayMetrics,
    @Inject(LINK_SIGNER) private readonly signer: LinkSigner,
    @Inject(USAGE_STAGES) private readonly usage: UsageStages,
    @Inject(TRACING_STAGES) private readonly tracing: TracingStages,
  ) {}

  /** The limit stage's options with shield refusals counted and the budget wait traced (when on). */
  private observedLimit(def: UpstreamDefinition, limits: UpstreamLimitStages) {
    return this.tracing.limitOptions(this.usage.limitOptions(limits.limit, def.name), def.name);
  }

  private limitsOf(def: UpstreamDefinition): UpstreamLimitStages {
    let l = this.limitStages.get(def);
    if (!l) {
      l = this.limits.forUpstream(def);
      this.limitStages.set(def, l);
    }
    return l;
  }

  private keyEcho(def: UpstreamDefinition, links: boolean): Stage {
    return keyEchoStage({
      secrets: () => def.credentials.secrets(),
      redact: (t) => this.redactor.redact(t),
      links: links
        ? new LinkRewriter({ upstream: def.name, baseUrl: def.transport.baseUrl, signer: this.signer })
        : undefined,
      onScrub: this.metrics.keyEchoScrubRecorder(def.name),
    });
  }

  private credentials(def: UpstreamDefinition): Stage {
    return credentialsStage({
      credentials: def.credentials,
      stripParams: CONSUMER_KEY_QUERY_PARAMS,
      stripHeaders: CONSUMER_KEY_HEADERS,
    });
  }

  private normalize(def: UpstreamDefinition): Stage {
    // No default Retry-After here: the limits decide it (configured default, growing on repeats).
    return normalizeStage({
      upstream: def.name,
      title: def.title,
      mapper: def.errorMapper,
      scrub: (t) => this.redactor.redact(t),
    });
  }

  build(def: UpstreamDefinition, transport: Handler, _settings: PipelineSettings): Handler {
    const limits = this.limitsOf(def);
    const usage = this.usage.vendorStage(def.name);
    const limit = this.observedLimit(def, limits);
    return compose(
      [
        this.cache.cacheStage(def),
        this.cache.coalesceStage(def),
        upstreamLimitStage(limit),
        this.keyEcho(def, true),
        this.credentials(def),
        // Retries pass the same (observed) gate: their budget waits are spans too.
        retryStage(limits.retry.gate ? { ...limits.retry, gate: limit.gate } : limits.retry),
        upstreamMetricsStage({ record: this.metrics.upstreamCallRecorder(def.name) }),
        ...(usage ? [usage] : []),
        this.tracing.vendorStage(def.name),
        this.normalize(def),
      ],
      transport,
    );
  }

  /**
   * The pipeline behind the upstream's signed links: a streamed GET with our credential, through the same
   * budget, breaker and scrubbing; never cached, coalesced or retried (the target is a file).
   */
  buildLinkHandler(def: UpstreamDefinition, transport: Handler): Handler {
    const limits = this.limitsOf(def);
    const usage = this.usage.vendorStage(def.name);
    return compose(
      [
        upstreamLimitStage(this.observedLimit(def, limits)),
        this.keyEcho(def, false),
        this.credentials(def),
        upstreamMetricsStage({ record: this.metrics.upstreamCallRecorder(def.name) }),
        ...(usage ? [usage] : []),
        this.tracing.vendorStage(def.name),
        this.normalize(def),
      ],
      transport,
    );
  }
}
