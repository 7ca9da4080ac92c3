import { Readable } from 'node:stream';
import { GatewayError } from '../../core/errors/gateway-error.js';
import type { ProxyRequest, ProxyResponse, Stage } from '../pipeline.types.js';
import { negativeError, newEntryId, type CacheEntry } from './cache-entry.js';
import { answerFrom, retentionMs, type CacheRuntime, type MissContext } from './cache-runtime.js';
import type { MissRole } from './response-store.js';

export interface CoalesceStageOptions {
  readonly upstream: string;
  readonly runtime: CacheRuntime;
}

interface Outcome {
  readonly res: ProxyResponse;
  /** Set when the answer came from someone else's call (read back from the store). */
  readonly entry?: CacheEntry;
}

/** Thrown (and swallowed by the cache stage) when a background refresh finds another replica refreshing. */
export class RefreshSkipped extends Error {}

/**
 * One upstream call per cache key in flight (architecture §4, §8). In-process, identical misses share one
 * promise; across replicas sharing Redis, the store elects one leader per key with a leased marker and the
 * others wait for its result in the cache. The leader stores the answer before it releases anyone, so a
 * waiter that wakes finds it; a leader that fails hands every waiter the same error at once. Only requests
 * the cache stage marked as cacheable misses are coalesced: writes, files and side-effecting GETs pass
 * straight through.
 */
export function coalesceStage(opts: CoalesceStageOptions): Stage {
  if (!opts.upstream) throw new Error('coalesceStage: upstream required');
  const { store, settings, contexts } = opts.runtime;
  const events = opts.runtime.metrics.forUpstream(opts.upstream);
  const inflight = new Map<string, Promise<Outcome>>();

  return (next) => {
    const fromEntry = (entry: CacheEntry): Outcome => {
      if (entry.negative) throw negativeError(entry.negative);
      return { res: answerFrom(entry, undefined, Date.now()), entry };
    };

    const storeAnswer = async (ctx: MissContext, res: ProxyResponse, token: string | undefined) => {
      if (res.body instanceof Readable || res.status !== 200 || res.body.length > settings.maxEntryBytes) {
        events.store_skip.inc();
        return;
      }
      const now = Date.now();
      const entry: CacheEntry = {
        id: newEntryId(),
        status: res.status,
        headers: res.headers,
        body: res.body,
        storedAt: now,
        freshUntil: now + ctx.policy.ttlMs,
      };
      const ttl = ctx.policy.ttlMs;
      if (!(await store.set(ctx.key, entry, retentionMs(ttl, settings), token, ctx.policy.indexed)))
        events.store_skip.inc();
    };

    const storeNotFound = async (ctx: MissContext, err: unknown, token: string | undefined) => {
      if (
        settings.negativeTtlMs <= 0 ||
        !(err instanceof GatewayError) ||
        err.code !== 'NOT_FOUND' ||
        !err.fromUpstream
      )
        return;
      const now = Date.now();
      const entry: CacheEntry = {
        id: newEntryId(),
        status: 404,
        headers: {},
        body: Buffer.alloc(0),
        storedAt: now,
        freshUntil: now + settings.negativeTtlMs,
        negative: {
          code: err.code,
          message: err.message,
          upstream: err.upstream,
          upstreamStatus: err.upstreamStatus,
          upstreamCode: err.upstreamCode,
        },
      };
      await store.set(ctx.key, entry, settings.negativeTtlMs, token, ctx.policy.indexed);
    };

    /** Calls the upstream as leader (fleet-wide or local) and stores the answer before anyone is released. */
    const call = async (
      req: ProxyRequest,
      ctx: MissContext,
      role: Exclude<MissRole, { role: 'follower' }>,
    ) => {
      const lease = role.role === 'leader' ? role.lease : undefined;
      // Double check: an answer may have been stored between our lookup and now (by a leader that has just
      // finished here or on another replica); taking it saves a second upstream call.
      const again = await store.get(ctx.key);
      if (again !== undefined && again.id !== ctx.previous?.id) {
        await lease?.release();
        return fromEntry(again);
      }
      let res: ProxyResponse;
      try {
        res = await next(req);
      } catch (err) {
        await storeNotFound(ctx, err, role.token);
        await lease?.fail(err);
        throw err;
      }
      await storeAnswer(ctx, res, role.token);
      await lease?.release();
      return { res };
    };

    const lead = async (req: ProxyRequest, ctx: MissContext): Promise<Outcome> => {
      for (;;) {
        const role = await store.beginMiss(ctx.key);
        if (role.role !== 'follower') return call(req, ctx, role);
        if (ctx.background) throw new RefreshSkipped();
        const waited = await store.waitFor(ctx.key, role.holder, ctx.previous?.id, req.deadline);
        if (waited.kind === 'entry') return fromEntry(waited.entry);
        if (waited.kind === 'error') throw waited.error;
        // The marker went away without a result: contend again (bounded by the request's deadline).
        if (Date.now() >= req.deadline)
          throw new GatewayError('UPSTREAM_TIMEOUT', { upstream: opts.upstream });
      }
    };

    return async (req) => {
      const ctx = contexts.get(req);
      if (ctx === undefined) return next(req);
      contexts.delete(req);
      const id = ctx.key.full;
      for (let existing = inflight.get(id); existing !== undefined; existing = inflight.get(id)) {
        let o: Outcome;
        try {
          o = await existing;
        } catch (err) {
          // A background refresh we joined found another replica refreshing: this request needs an answer.
          if (err instanceof RefreshSkipped && !ctx.background) continue;
          ctx.outcome = 'COALESCED';
          throw err;
        }
        ctx.outcome = 'COALESCED';
        ctx.entry = o.entry;
        return o.res;
      }
      const p = lead(req, ctx);
      inflight.set(id, p);
      const clear = () => {
        if (inflight.get(id) === p) inflight.delete(id);
      };
      p.then(clear, clear);
      const o = await p;
      if (o.entry) {
        ctx.outcome = 'COALESCED';
        ctx.entry = o.entry;
      }
      return o.res;
    };
  };
}
