import { GatewayError } from '../../core/errors/gateway-error.js';
import { childSpan } from '../../tracing/trace-context.js';
import type { ProxyResponse, RouteDefinition, Stage } from '../pipeline.types.js';
import { negativeError, type CacheEntry } from './cache-entry.js';
import { cacheKeyOf, scopeOf, type CacheKey } from './cache-key.js';
import { routePolicies, routePolicy, type RoutePolicy } from './cache-policy.js';
import {
  answerFrom,
  validateSettings,
  type CachedPolicy,
  type CacheRuntime,
  type MissContext,
} from './cache-runtime.js';

export interface CacheStageOptions {
  readonly upstream: string;
  /** The upstream's route table: policies are decided once per route here. */
  readonly routes: readonly RouteDefinition[];
  readonly runtime: CacheRuntime;
}

/**
 * The outermost stage (architecture §4): answers fresh hits from the store, serves stale entries while one
 * background refresh runs (stale-while-revalidate) or when the call fails with a retryable error
 * (stale-if-error: upstream 5xx, timeout, refusal, 429 cooldown, open breaker), and drops a family's entries
 * after a successful write. Misses go on to the coalescing stage, which calls the upstream and stores.
 * Files, writes and side-effecting GETs pass through as BYPASS.
 */
export function cacheStage(opts: CacheStageOptions): Stage {
  if (!opts.upstream) throw new Error('cacheStage: upstream required');
  validateSettings(opts.runtime.settings);
  const { store, settings, contexts } = opts.runtime;
  const policies = routePolicies(opts.upstream, opts.routes, settings.ttlOverrides);
  const events = opts.runtime.metrics.forUpstream(opts.upstream);
  const swr = settings.staleWhileRevalidateMs;
  const sie = settings.staleIfErrorMs;
  /** Keys with a background refresh running in this process: one per key. */
  const refreshing = new Set<string>();

  const policyOf = (route: RouteDefinition): RoutePolicy => {
    let p = policies.get(route);
    if (p === undefined) {
      // A route outside the table (tests build requests by hand): decide once and remember.
      p = routePolicy(opts.upstream, route, settings.ttlOverrides, new Set());
      policies.set(route, p);
    }
    return p;
  };

  return (next) => {
    const refresh = (
      req: Parameters<typeof next>[0],
      key: CacheKey,
      policy: CachedPolicy,
      entry: CacheEntry,
    ) => {
      if (refreshing.has(key.full)) return;
      refreshing.add(key.full);
      const ctx: MissContext = { key, policy, previous: entry, background: true, outcome: 'MISS' };
      contexts.set(req, ctx);
      // Nobody awaits this: a failure keeps the stale entry, which is what stale-while-revalidate means.
      next(req)
        .catch(() => undefined)
        .finally(() => refreshing.delete(key.full));
    };

    return async (req): Promise<ProxyResponse> => {
      const policy = policyOf(req.route);
      if (policy.kind === 'write') {
        const res = await next(req);
        // Only a successful write gets here (errors throw); readers must not see the old state afterwards.
        await store.invalidate(scopeOf(req.upstream, req.credentialId, policy.family));
        events.bypass.inc();
        return { ...res, cache: 'BYPASS' };
      }
      if (policy.kind === 'bypass') {
        events.bypass.inc();
        const res = await next(req);
        return { ...res, cache: 'BYPASS' };
      }

      const key = cacheKeyOf(req, policy.key);
      const lookup = childSpan(req.trace, 'cache lookup');
      const entry = await store.get(key);
      lookup?.setAttribute('atrium.cache.found', entry !== undefined);
      lookup?.end();
      if (entry !== undefined && !req.noCache) {
        const now = Date.now();
        if (now < entry.freshUntil) {
          events.hit.inc();
          if (entry.negative) throw negativeError(entry.negative);
          return answerFrom(entry, 'HIT', now);
        }
        if (!entry.negative && now < entry.freshUntil + swr) {
          events.stale.inc();
          refresh(req, key, policy, entry);
          return answerFrom(entry, 'STALE', now);
        }
      }

      const ctx: MissContext = { key, policy, previous: entry, background: false, outcome: 'MISS' };
      contexts.set(req, ctx);
      try {
        const res = await next(req);
        (ctx.outcome === 'MISS' ? events.miss : events.coalesced).inc();
        return {
          ...res,
          cache: ctx.outcome,
          ageSeconds: ctx.entry ? (Date.now() - ctx.entry.storedAt) / 1000 : undefined,
        };
      } catch (err) {
        if (
          entry !== undefined &&
          !entry.negative &&
          err instanceof GatewayError &&
          err.retryable &&
          Date.now() < entry.freshUntil + sie
        ) {
          events.stale.inc();
          return answerFrom(entry, 'STALE', Date.now());
        }
        (ctx.outcome === 'MISS' ? events.miss : events.coalesced).inc();
        throw err;
      }
    };
  };
}
