import { CONSUMER_KEY_HEADERS, CONSUMER_KEY_QUERY_PARAMS } from '../core/auth/consumer.js';
import type { UpstreamMetrics } from '../core/ports/metrics.port.js';
import { compose } from './compose.js';
import { RetryBudget } from './limits/retry-budget.js';
import { LinkRewriter } from './links/link-rewriter.js';
import type { LinkSigner } from './links/link-signer.js';
import type { TracingStages, UsageStages } from './pipeline-extensions.js';
import type { Handler } from './pipeline.types.js';
import type { ResponseCache } from './response-cache.service.js';
import { cacheStage } from './stages/cache.stage.js';
import { credentialsStage } from './stages/credentials.stage.js';
import { keyEchoStage } from './stages/key-echo.stage.js';
import { normalizeStage } from './stages/normalize.stage.js';
import { refusalOf, upstreamLimitStage } from './stages/upstream-limit.stage.js';
import { upstreamMetricsStage } from './stages/upstream-metrics.stage.js';
import type { UpstreamDefinition } from './upstream-definition.js';
import type { UpstreamLimitsService } from './upstream-limits.service.js';

/** What the stages of every upstream share (ProxyService holds them). */
export interface PipelineParts {
  readonly cache: ResponseCache;
  readonly limits: UpstreamLimitsService;
  readonly metrics: UpstreamMetrics;
  readonly redact: (text: string) => string;
  readonly signer: LinkSigner;
  readonly usage: UsageStages;
  readonly tracing: TracingStages;
}

/**
 * The request path of one upstream, outermost stage first: each stage in its own file in `stages/`, each
 * option visible here. Composed once per upstream, at registration; `linkHandler` follows
 * the upstream's signed links.
 */
export function buildPipelines(def: UpstreamDefinition, transport: Handler, p: PipelineParts) {
  const { name } = def;
  // One limiter per upstream: the limit stage takes a token per attempt (retries included), and the
  // signed-link pipeline spends the same budget.
  const limiter = p.limits.limiterFor(def);
  const retry = p.limits.retrySettings(name);
  const cache = { upstream: name, routes: def.routes, ...p.cache.stageOptions(name) };
  // Usage counts the shield's refusals and tracing times the budget wait: both wrap the limiter's gate
  // (pipeline-extensions.ts: modules above proxy/ fill these in).
  const counted = p.usage.limitOptions(
    { gate: limiter, onRateLimited: p.limits.rateLimitedRecorder(name) },
    name,
  );
  const limit = p.tracing.limitOptions(counted, name);
  const usage = p.usage.vendorStage(name);
  const vendorCall = [...(usage ? [usage] : []), p.tracing.vendorStage(name)];
  const echo = {
    secrets: () => def.credentials.secrets(),
    redact: p.redact,
    onScrub: p.metrics.keyEchoScrubRecorder(name),
  };
  const keys = { stripParams: CONSUMER_KEY_QUERY_PARAMS, stripHeaders: CONSUMER_KEY_HEADERS };
  const record = p.metrics.upstreamCallRecorder(name);
  // No default Retry-After here: the limits decide it (configured default, growing on repeats).
  const errors = { upstream: name, title: def.title, mapper: def.errorMapper, scrub: p.redact };

  const handler = compose(
    [
      // Cache and coalescing; a miss with nothing stale to fall back on is refused there while the upstream
      // is refusing every call.
      cacheStage({ ...cache, refuse: refusalOf(limit) }),
      // Each attempt, retries included, is admitted by the limiter and runs every stage below afresh.
      upstreamLimitStage({
        ...limit,
        retry: {
          attempts: retry.attempts,
          baseMs: retry.baseMs,
          maxBackoffMs: retry.maxBackoffMs,
          budget: new RetryBudget({ ratio: retry.budgetRatio }),
          onRetry: p.limits.retryRecorder(name),
        },
      }),
      keyEchoStage({
        ...echo,
        links: new LinkRewriter({ upstream: name, baseUrl: def.transport.baseUrl, signer: p.signer }),
      }),
      credentialsStage({ credentials: def.credentials, ...keys }),
      upstreamMetricsStage({ record }),
      ...vendorCall,
      normalizeStage(errors),
    ],
    transport,
  );
  // The target is a file: never cached, coalesced or retried; the same budget, breaker and scrubbing.
  const linkHandler = compose(
    [
      upstreamLimitStage(limit),
      keyEchoStage(echo),
      credentialsStage({ credentials: def.credentials, ...keys }),
      upstreamMetricsStage({ record }),
      ...vendorCall,
      normalizeStage(errors),
    ],
    transport,
  );
  return { handler, linkHandler };
}
