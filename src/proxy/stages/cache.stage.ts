import { GatewayError } from '../../core/errors/gateway-error.js';
import { childSpan } from '../../core/tracing/trace-context.js';
import type { CacheEventCounters } from '../cache-metrics.js';
import { negativeError, type CacheEntry } from '../cache/cache-entry.js';
import { cacheKeyOf, scopeOf, type CacheKey } from '../cache/cache-key.js';
import { policyLookup, type CachedPolicy, type RoutePolicy } from '../cache/cache-policy.js';
import { answerFrom, validateSettings, type CacheSettings } from '../cache/cache-settings.js';
import { storeAnswer, storeNotFound } from '../cache/entry-writer.js';
import type { ResponseStore } from '../cache/response-store.js';
import type {
  CacheMiss,
  EntryAnswer,
  EntryStage,
  ProxyRequest,
  ProxyResponse,
  RouteDefinition,
} from '../pipeline.types.js';

export interface CacheStageOptions {
  readonly upstream: string;
  /** The upstream's route table: policies are decided once per route here. */
  readonly routes: readonly RouteDefinition[];
  readonly store: ResponseStore;
  readonly settings: CacheSettings;
  readonly events: CacheEventCounters;
  /**
   * The upstream's refusal of any call right now (cooldown after a vendor 429, open breaker), counted as the
   * limit stage counts it. A miss with no entry to fall back on is refused here, as the limit stage behind
   * would refuse it, without a coalescing round or a promise per stage: a 429 storm stays cheap.
   */
  readonly refuse?: (req: ProxyRequest) => GatewayError | undefined;
}

/**
 * The outermost stage (architecture §4): answers fresh hits from the store, serves stale entries while one
 * background refresh runs (stale-while-revalidate) or when the call fails with a retryable error
 * (stale-if-error: upstream 5xx, timeout, refusal, 429 cooldown, open breaker), and drops a family's entries
 * after a successful write. A miss goes on with `req.cacheMiss` (what the lookup found); a coalescing stage
 * behind stores the answer and says so there, else this stage stores it. Files, writes and side-effecting
 * GETs pass through as BYPASS. The pipeline's entry: a cached error and a refusal decided at the lookup are
 * returned, not thrown (`EntryAnswer`), when the store answered synchronously.
 */
export function cacheStage(opts: CacheStageOptions): EntryStage {
  if (!opts.upstream) throw new Error('cacheStage: upstream required');
  if (!opts.store) throw new Error('cacheStage: store required');
  validateSettings(opts.settings);
  const { store, settings, events, refuse } = opts;
  const policyOf = policyLookup(opts.upstream, opts.routes, settings.ttlOverrides);
  const swr = settings.staleWhileRevalidateMs;
  const sie = settings.staleIfErrorMs;
  /** Keys with a background refresh running in this process: one per key. */
  const refreshing = new Set<string>();

  return (next) => {
    /**
     * Stores a miss's outcome when no coalescing stage did. The store's write-race token is taken after the
     * call here (a coalescing stage takes it before): alone, the cache cannot see a write that raced the call.
     */
    const storeOwn = async (
      key: CacheKey,
      policy: CachedPolicy,
      write: (token?: string) => Promise<void>,
    ) => {
      const role = await store.beginMiss(key);
      if (role.role === 'follower') return; // another replica is calling: it stores
      try {
        await write(role.token);
      } finally {
        if (role.role === 'leader') await role.lease.release();
      }
    };

    /** Passes a miss on; stores the answer unless a coalescing stage did. */
    const fetchMiss = async (req: ProxyRequest, key: CacheKey, policy: CachedPolicy, miss: CacheMiss) => {
      let res: ProxyResponse;
      try {
        res = await next({ ...req, cacheMiss: miss });
      } catch (err) {
        if (!miss.coalescing)
          await storeOwn(key, policy, (token) => storeNotFound({ store, settings, key, policy, token }, err));
        throw err;
      }
      if (!miss.coalescing)
        await storeOwn(key, policy, async (token) => {
          if (!(await storeAnswer({ store, settings, key, policy, token }, res))) events.store_skip.inc();
        });
      return res;
    };

    const refresh = (req: ProxyRequest, key: CacheKey, policy: CachedPolicy, entry: CacheEntry) => {
      if (refreshing.has(key.full)) return;
      refreshing.add(key.full);
      // Nobody awaits this: a failure keeps the stale entry, which is what stale-while-revalidate means.
      fetchMiss(req, key, policy, { previousId: entry.id, background: true, key })
        .catch(() => undefined)
        .finally(() => refreshing.delete(key.full));
    };

    /** A write or an uncacheable read: straight through, then the write invalidates its family. */
    const passThrough = async (req: ProxyRequest, policy: Exclude<RoutePolicy, CachedPolicy>) => {
      if (policy.kind === 'write') {
        const res = await next(req);
        // Only a successful write gets here (errors throw); readers must not see the old state afterwards.
        await store.invalidate(scopeOf(req.upstream, req.credentialId, policy.family));
        events.bypass.inc();
        return { ...res, cache: 'BYPASS' as const };
      }
      events.bypass.inc();
      const res = await next(req);
      return { ...res, cache: 'BYPASS' as const };
    };

    /**
     * What the lookup found decides: a fresh entry answers now (no promise: a hit from the memory store
     * never waits), a stale one answers now and refreshes in the background, anything else is a miss. A
     * cached error, or a refusal of a miss with nothing to fall back on, is the returned error.
     */
    const decide = (
      req: ProxyRequest,
      key: CacheKey,
      policy: CachedPolicy,
      entry: CacheEntry | undefined,
    ): EntryAnswer => {
      if (entry !== undefined && !req.noCache) {
        const now = Date.now();
        if (now < entry.freshUntil) {
          events.hit.inc();
          if (entry.negative) return negativeError(entry.negative);
          return answerFrom(entry, 'HIT', now);
        }
        if (!entry.negative && now < entry.freshUntil + swr) {
          events.stale.inc();
          refresh(req, key, policy, entry);
          return answerFrom(entry, 'STALE', now);
        }
      }
      if (refuse !== undefined && !fallsBack(entry)) {
        const err = refuse(req);
        if (err) {
          events.miss.inc();
          return err;
        }
      }
      return missOf(req, key, policy, entry);
    };

    /** Whether a failed call could still be answered from this entry (stale-if-error). */
    const fallsBack = (entry: CacheEntry | undefined): boolean =>
      entry !== undefined && !entry.negative && Date.now() < entry.freshUntil + sie;

    const missOf = async (
      req: ProxyRequest,
      key: CacheKey,
      policy: CachedPolicy,
      entry: CacheEntry | undefined,
    ): Promise<ProxyResponse> => {
      const miss: CacheMiss = { previousId: entry?.id, background: false, key };
      const counted = () => (miss.coalescing?.shared ? events.coalesced : events.miss).inc();
      try {
        const res = await fetchMiss(req, key, policy, miss);
        counted();
        // Age only for an answer read back from the store (another request's call).
        return { ...res, cache: miss.coalescing?.shared ? 'COALESCED' : 'MISS', ageSeconds: res.ageSeconds };
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
        counted();
        throw err;
      }
    };

    return (req) => {
      const policy = policyOf(req.route);
      if (policy.kind !== 'cache') return passThrough(req, policy);
      const key = cacheKeyOf(req, policy.key);
      req.cacheKey = key;
      const lookup = childSpan(req.trace, 'cache lookup');
      if (store.getSync) {
        const entry = store.getSync(key);
        lookup?.setAttribute('atrium.cache.found', entry !== undefined);
        lookup?.end();
        return decide(req, key, policy, entry);
      }
      return store.get(key).then((entry) => {
        lookup?.setAttribute('atrium.cache.found', entry !== undefined);
        lookup?.end();
        const answer = decide(req, key, policy, entry);
        // Behind a promise an error is its rejection, as the stages' answers are.
        return answer instanceof GatewayError ? Promise.reject(answer) : answer;
      });
    };
  };
}

/**
 * The fresh, positive entry under `key` as a HIT, counted as the stage counts one; undefined for anything
 * else (absent, stale, a cached error, a store that cannot answer synchronously), which the stage itself
 * then handles. The proxy's shortcut for a request it has seen before (proxy.service.ts).
 */
export function freshHitReader(
  opts: CacheStageOptions,
): ((key: CacheKey) => ProxyResponse | undefined) | undefined {
  const { store, events } = opts;
  const getSync = store.getSync?.bind(store);
  if (!getSync) return undefined;
  return (key) => {
    const entry = getSync(key);
    if (entry === undefined || entry.negative) return undefined;
    const now = Date.now();
    if (now >= entry.freshUntil) return undefined;
    events.hit.inc();
    return answerFrom(entry, 'HIT', now);
  };
}
