import { GatewayError } from '../../core/errors/gateway-error.js';
import { childSpan } from '../../core/tracing/trace-context.js';
import type { CacheEventCounters } from '../cache-metrics.js';
import { negativeError, type CacheEntry } from '../cache/cache-entry.js';
import { cacheKeyOf, scopeOf, type CacheKey } from '../cache/cache-key.js';
import { policyLookup, type CachedPolicy, type RoutePolicy } from '../cache/cache-policy.js';
import { answerFrom, validateSettings, type CacheSettings } from '../cache/cache-settings.js';
import { storeAnswer, storeNotFound } from '../cache/entry-writer.js';
import { withValidator } from '../cache/validator.js';
import type { MissRole, ResponseStore } from '../cache/response-store.js';
import type { ProxyRequest, ProxyResponse, RouteDefinition, Stage } from '../pipeline.types.js';

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
   * would refuse it, without joining or leading a coalesced call.
   */
  readonly refuse?: (req: ProxyRequest) => GatewayError | undefined;
}

/** What one miss knows: its key, its policy, and what the lookup found before it. */
interface Miss {
  readonly key: CacheKey;
  readonly policy: CachedPolicy;
  /** Id of the entry that existed before this request (stale, or skipped for `no-cache`): a waiter wants a newer one. */
  readonly previousId?: string;
  /** A stale-while-revalidate refresh: nobody waits for it, so it never waits on another replica. */
  readonly background: boolean;
}

/** A coalesced call's answer, and whether it came from another request's call (read back from the store). */
interface Outcome {
  readonly res: ProxyResponse;
  readonly shared: boolean;
}

/** Thrown (and swallowed) when a background refresh finds another replica refreshing. */
export class RefreshSkipped extends Error {}

/** An error that carries whether it came from another request's call (for the coalesced/miss counters). */
class SharedFailure extends Error {
  constructor(
    readonly error: unknown,
    readonly shared: boolean,
  ) {
    super('coalesced failure');
  }
}

/**
 * The response cache and its coalescing, one stage: answers fresh hits from the store, serves stale entries
 * while one background refresh runs (stale-while-revalidate) or when the call fails with a retryable error
 * (stale-if-error: upstream 5xx, timeout, refusal, 429 cooldown, open breaker), and drops a family's entries
 * after a successful write. A miss makes one upstream call per key, as undici's deduplicate interceptor does:
 * identical misses in this process share one promise (the stage's own pending map, by its own key); across
 * replicas sharing Redis the store elects one leader per key with a leased marker and the others wait for its
 * result in the store. The leader stores the answer before anyone is released; a leader that fails hands
 * every waiter the same error. Files, writes and side-effecting GETs pass through as BYPASS. Errors (a cached
 * 404, a refusal) are thrown.
 */
export function cacheStage(opts: CacheStageOptions): Stage {
  if (!opts.upstream) throw new Error('cacheStage: upstream required');
  if (!opts.store) throw new Error('cacheStage: store required');
  validateSettings(opts.settings);
  const { store, settings, events, refuse } = opts;
  const policyOf = policyLookup(opts.upstream, opts.routes, settings.ttlOverrides);
  const swr = settings.staleWhileRevalidateMs;
  const sie = settings.staleIfErrorMs;
  /** Calls in flight in this process, by key: one per key. */
  const inflight = new Map<string, Promise<Outcome>>();
  /** Keys with a background refresh running in this process: one per key. */
  const refreshing = new Set<string>();

  return (next) => {
    const fromEntry = (entry: CacheEntry): Outcome => {
      if (entry.negative) throw negativeError(entry.negative);
      return { res: answerFrom(entry, 'COALESCED', Date.now()), shared: true };
    };

    /** Calls the upstream as leader (fleet-wide or local) and stores the answer before anyone is released. */
    const call = async (req: ProxyRequest, miss: Miss, role: Exclude<MissRole, { role: 'follower' }>) => {
      const lease = role.role === 'leader' ? role.lease : undefined;
      // An answer may have been stored between our lookup and now (by a leader that has just finished here
      // or on another replica): taking it saves a second upstream call.
      const again = await store.get(miss.key);
      if (again !== undefined && again.id !== miss.previousId) {
        await lease?.release();
        return fromEntry(again);
      }
      const target = { store, settings, key: miss.key, policy: miss.policy, token: role.token };
      let res: ProxyResponse;
      try {
        res = withValidator(await next(req));
      } catch (err) {
        await storeNotFound(target, err);
        await lease?.fail(err);
        throw err;
      }
      if (!(await storeAnswer(target, res))) events.store_skip.inc();
      await lease?.release();
      return { res, shared: false };
    };

    /** Leads the miss in this process: becomes the fleet's leader, or waits for the replica that is. */
    const lead = async (req: ProxyRequest, miss: Miss): Promise<Outcome> => {
      for (;;) {
        const role = await store.beginMiss(miss.key);
        if (role.role !== 'follower') return call(req, miss, role);
        if (miss.background) throw new RefreshSkipped();
        const waited = await store.waitFor(miss.key, role.holder, miss.previousId, req.deadline);
        if (waited.kind === 'entry') return fromEntry(waited.entry);
        if (waited.kind === 'error') throw waited.error;
        // The marker went away without a result: contend again (bounded by the request's deadline).
        if (Date.now() >= req.deadline)
          throw new GatewayError('UPSTREAM_TIMEOUT', { upstream: opts.upstream });
      }
    };

    /** One call per key in this process: joins the call in flight, or leads one. */
    const coalesced = async (req: ProxyRequest, miss: Miss): Promise<Outcome> => {
      const id = miss.key.full;
      for (let existing = inflight.get(id); existing !== undefined; existing = inflight.get(id)) {
        try {
          return { res: (await existing).res, shared: true };
        } catch (err) {
          // A background refresh we joined found another replica refreshing: this request needs an answer.
          if (err instanceof RefreshSkipped && !miss.background) continue;
          throw new SharedFailure(err, true);
        }
      }
      const p = lead(req, miss);
      inflight.set(id, p);
      const clear = () => {
        if (inflight.get(id) === p) inflight.delete(id);
      };
      p.then(clear, clear);
      try {
        return await p;
      } catch (err) {
        throw new SharedFailure(err, false);
      }
    };

    const refresh = (req: ProxyRequest, miss: Miss) => {
      if (refreshing.has(miss.key.full)) return;
      refreshing.add(miss.key.full);
      // Nobody awaits this: a failure keeps the stale entry, which is what stale-while-revalidate means.
      coalesced(req, miss)
        .catch(() => undefined)
        .finally(() => refreshing.delete(miss.key.full));
    };

    /** A write or an uncacheable read: straight through, then the write invalidates its family. */
    const passThrough = async (req: ProxyRequest, policy: Exclude<RoutePolicy, CachedPolicy>) => {
      const res = await next(req);
      // Only a successful write gets here (errors throw); readers must not see the old state afterwards.
      if (policy.kind === 'write')
        await store.invalidate(scopeOf(req.upstream, req.credentialId, policy.family));
      events.bypass.inc();
      return { ...res, cache: 'BYPASS' as const };
    };

    /** Whether a failed call could still be answered from this entry (stale-if-error). */
    const fallsBack = (entry: CacheEntry | undefined): entry is CacheEntry =>
      entry !== undefined && !entry.negative && Date.now() < entry.freshUntil + sie;

    const missOf = async (req: ProxyRequest, miss: Miss, entry: CacheEntry | undefined) => {
      try {
        const { res, shared } = await coalesced(req, miss);
        (shared ? events.coalesced : events.miss).inc();
        // Age only for an answer read back from the store (another request's call); a fresh call's answer is
        // fresh for the route's whole TTL.
        return {
          ...res,
          cache: shared ? 'COALESCED' : 'MISS',
          ageSeconds: res.ageSeconds,
          freshForSeconds: res.freshForSeconds ?? miss.policy.ttlMs / 1000,
        } as ProxyResponse;
      } catch (failure) {
        const { error, shared } =
          failure instanceof SharedFailure ? failure : { error: failure, shared: false };
        if (fallsBack(entry) && error instanceof GatewayError && error.retryable) {
          events.stale.inc();
          return answerFrom(entry, 'STALE', Date.now());
        }
        (shared ? events.coalesced : events.miss).inc();
        throw error;
      }
    };

    return async (req) => {
      const policy = policyOf(req.route);
      if (policy.kind !== 'cache') return passThrough(req, policy);
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
          refresh(req, { key, policy, previousId: entry.id, background: true });
          return answerFrom(entry, 'STALE', now);
        }
      }
      if (refuse !== undefined && !fallsBack(entry)) {
        const err = refuse(req);
        if (err) {
          events.miss.inc();
          throw err;
        }
      }
      return missOf(req, { key, policy, previousId: entry?.id, background: false }, entry);
    };
  };
}
