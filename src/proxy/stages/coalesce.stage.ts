import { GatewayError } from '../../core/errors/gateway-error.js';
import type { CacheEventCounters } from '../cache-metrics.js';
import { negativeError, type CacheEntry } from '../cache/cache-entry.js';
import { cacheKeyOf, type CacheKey } from '../cache/cache-key.js';
import { policyLookup, type CachedPolicy } from '../cache/cache-policy.js';
import { answerFrom, type CacheSettings } from '../cache/cache-settings.js';
import { storeAnswer, storeNotFound } from '../cache/entry-writer.js';
import type { MissRole, ResponseStore } from '../cache/response-store.js';
import type { ProxyRequest, ProxyResponse, RouteDefinition, Stage } from '../pipeline.types.js';

export interface CoalesceStageOptions {
  readonly upstream: string;
  /** The upstream's route table: which routes are coalesced (cacheable GETs) and how their key is built. */
  readonly routes: readonly RouteDefinition[];
  /** Where a leader leaves its answer for the waiters (and other replicas elect one leader per key). */
  readonly store: ResponseStore;
  readonly settings: CacheSettings;
  /** Answers not stored (streams, other statuses, over the size cap, raced by a write). */
  readonly events: Pick<CacheEventCounters, 'store_skip'>;
}

interface Outcome {
  readonly res: ProxyResponse;
  /** Set when the answer came from someone else's call (read back from the store). */
  readonly entry?: CacheEntry;
}

/** What one coalesced miss knows: its key, its policy, and what the lookup before it found. */
interface Miss {
  readonly key: CacheKey;
  readonly policy: CachedPolicy;
  /** Id of the entry that existed before this request: a waiter wants a newer one. */
  readonly previousId?: string;
  readonly background: boolean;
}

/** Thrown (and swallowed by the cache stage) when a background refresh finds another replica refreshing. */
export class RefreshSkipped extends Error {}

/**
 * One upstream call per cache key in flight (architecture §4, §8), like undici's deduplicate interceptor:
 * it computes its own key (the pure cache-key function) and works with or without the cache stage. In
 * process, identical cacheable GETs share one promise; across replicas sharing Redis, the store elects one
 * leader per key with a leased marker and the others wait for its result in the store. The leader stores
 * the answer before it releases anyone, so a waiter that wakes finds it; a leader that fails hands every
 * waiter the same error at once. Writes, files, side-effecting GETs and GETs without a TTL pass straight
 * through. Behind the cache stage, `req.cacheMiss` says what the lookup found; alone, the stage looks itself.
 */
export function coalesceStage(opts: CoalesceStageOptions): Stage {
  if (!opts.upstream) throw new Error('coalesceStage: upstream required');
  if (!opts.store) throw new Error('coalesceStage: store required');
  const { store, settings, events } = opts;
  const policyOf = policyLookup(opts.upstream, opts.routes, settings.ttlOverrides);
  const inflight = new Map<string, Promise<Outcome>>();

  return (next) => {
    const fromEntry = (entry: CacheEntry): Outcome => {
      if (entry.negative) throw negativeError(entry.negative);
      return { res: answerFrom(entry, 'COALESCED', Date.now()), entry };
    };

    /** Calls the upstream as leader (fleet-wide or local) and stores the answer before anyone is released. */
    const call = async (req: ProxyRequest, miss: Miss, role: Exclude<MissRole, { role: 'follower' }>) => {
      const lease = role.role === 'leader' ? role.lease : undefined;
      // Double check: an answer may have been stored between our lookup and now (by a leader that has just
      // finished here or on another replica); taking it saves a second upstream call.
      const again = await store.get(miss.key);
      if (again !== undefined && again.id !== miss.previousId) {
        await lease?.release();
        return fromEntry(again);
      }
      const target = { store, settings, key: miss.key, policy: miss.policy, token: role.token };
      let res: ProxyResponse;
      try {
        res = await next(req);
      } catch (err) {
        await storeNotFound(target, err);
        await lease?.fail(err);
        throw err;
      }
      if (!(await storeAnswer(target, res))) events.store_skip.inc();
      await lease?.release();
      return { res };
    };

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

    const missOf = async (req: ProxyRequest, policy: CachedPolicy): Promise<Miss> => {
      const found = req.cacheMiss;
      // Behind the cache stage its lookup's key is this request's key (same function, same route table).
      if (found)
        return {
          policy,
          previousId: found.previousId,
          background: found.background,
          key: found.key ?? cacheKeyOf(req, policy.key),
        };
      const key = cacheKeyOf(req, policy.key);
      // No cache stage in front: what is stored now is what a waiter must not take for a newer answer.
      return { key, policy, previousId: (await store.get(key))?.id, background: false };
    };

    // Tells the cache stage (if any) that this stage stored the answer and whose call it was.
    const settle = (req: ProxyRequest, shared: boolean): void => {
      if (req.cacheMiss) req.cacheMiss.coalescing = { shared };
    };

    return async (req) => {
      const policy = policyOf(req.route);
      if (policy.kind !== 'cache') return next(req);
      const miss = await missOf(req, policy);
      const id = miss.key.full;
      for (let existing = inflight.get(id); existing !== undefined; existing = inflight.get(id)) {
        let o: Outcome;
        try {
          o = await existing;
        } catch (err) {
          // A background refresh we joined found another replica refreshing: this request needs an answer.
          if (err instanceof RefreshSkipped && !miss.background) continue;
          settle(req, true);
          throw err;
        }
        settle(req, true);
        return o.entry ? o.res : { ...o.res, cache: 'COALESCED' };
      }
      const p = lead(req, miss);
      inflight.set(id, p);
      const clear = () => {
        if (inflight.get(id) === p) inflight.delete(id);
      };
      p.then(clear, clear);
      let o: Outcome;
      try {
        o = await p;
      } catch (err) {
        settle(req, false);
        throw err;
      }
      settle(req, o.entry !== undefined);
      return o.res;
    };
  };
}
