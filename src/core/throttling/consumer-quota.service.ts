import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import type { Counter } from 'prom-client';
import type { Consumer } from '../auth/consumer.js';
import { GatewayError } from '../errors/gateway-error.js';
import { SYSTEM_CLOCK, type Clock } from '../time/clock.js';
import {
  isMultiWindowStorage,
  type MultiWindowThrottlerStorage,
  type QuotaVerdict,
  type QuotaWindow,
} from './quota-storage.js';
import { admitUser } from './user-quota.js';

/** Everything about a consumer's quota that can be worked out once, not per request. */
interface ConsumerPlan {
  readonly consumer: Consumer;
  readonly windows: readonly QuotaWindow[];
  /** Storage keys, one per window (`{consumer}:window`): the consumer id, never a key or a hash of one. */
  readonly keys: readonly string[];
  /** `RateLimit-Policy`: `20;w=1, 600;w=60`. */
  readonly policy: string;
  /** Last remaining count seen per window, read by the quota gauge at scrape time. */
  readonly remaining: number[];
  /** When each window seen last resets (epoch ms): past it, the window is whole again. */
  readonly resetAt: number[];
}

/** Where the `RateLimit-*` headers go: a Fastify reply, or an in-process call's header record. */
export interface HeaderSink {
  header(name: string, value: string | number): unknown;
}

export interface ConsumerThrottlerMetrics {
  /** `atrium_rate_limited_total{upstream,kind}`. */
  readonly rateLimited: Counter<'upstream' | 'kind'>;
}

export const CONSUMER_THROTTLER_METRICS = Symbol('ConsumerThrottlerMetrics');
export const QUOTA_CLOCK = Symbol('QuotaClock');

/**
 * The inbound quota of each consumer: `@nestjs/throttler`'s storage, keyed by consumer id, with the windows
 * from that consumer's config instead of module-wide throttlers. Every answer to a consumer carries
 * `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (the most constraining window) and
 * `RateLimit-Policy`. Over quota → 429 CONSUMER_RATE_LIMITED with `Retry-After`. A plain service: the
 * global guard (ConsumerThrottlerGuard) and the inner calls of a batch or view (RouteCaller) call it.
 *
 * The per-request work is one storage call (O(1) per window; one Redis round trip for all windows) and four
 * headers: no metadata lookups, no hashing, no per-request allocation beyond the storage's answer.
 */
@Injectable()
export class ConsumerQuota {
  /**
   * By consumer id, with the Consumer object the plan was built for: a consumer changed at run time is a new
   * object, so its plan is rebuilt on its next request and the stale one replaced (not kept beside it).
   */
  private readonly plans = new Map<string, { consumer: Consumer; plan: ConsumerPlan | null }>();
  private readonly multi?: MultiWindowThrottlerStorage;

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(CONSUMER_THROTTLER_METRICS) private readonly metrics: ConsumerThrottlerMetrics,
    @Optional() @Inject(QUOTA_CLOCK) private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    if (isMultiWindowStorage(storage)) this.multi = storage;
  }

  /** Plans of the consumers seen so far (the quota gauge reads them). */
  seenPlans(): Iterable<ConsumerPlan> {
    const out: ConsumerPlan[] = [];
    for (const p of this.plans.values()) if (p.plan) out.push(p.plan);
    return out;
  }

  /**
   * Requests left in window `i` of a plan as of now: the count last seen, or the whole limit once that
   * window has reset (a consumer that stopped calling is not shown as spent long after its window).
   */
  remainingNow(plan: ConsumerPlan, i: number): number {
    return this.clock.now() >= plan.resetAt[i] ? plan.windows[i].limit : plan.remaining[i];
  }

  private planOf(consumer: Consumer): ConsumerPlan | null {
    const seen = this.plans.get(consumer.id);
    if (seen !== undefined && seen.consumer === consumer) return seen.plan;
    let plan: ConsumerPlan | null;
    if (consumer.limits.length === 0) plan = null;
    else {
      const windows = consumer.limits.map((l) => ({ name: l.name, ttlMs: l.ttlMs, limit: l.limit }));
      plan = {
        consumer,
        windows,
        keys: windows.map((w) => `{${consumer.id}}:${w.name}`),
        policy: windows.map((w) => `${w.limit};w=${Math.max(1, Math.ceil(w.ttlMs / 1000))}`).join(', '),
        remaining: windows.map((w) => w.limit),
        resetAt: windows.map(() => 0),
      };
    }
    this.plans.set(consumer.id, { consumer, plan });
    return plan;
  }

  /**
   * Counts one request of this consumer and sets the `RateLimit-*` headers on `reply`; throws 429 when over
   * quota. Synchronous with the in-memory storage; a promise with Redis. `upstream` labels the refusal
   * metric.
   */
  admit(consumer: Consumer, reply: HeaderSink, upstream: string): void | Promise<void> {
    const plan = this.planOf(consumer);
    if (plan === null) return;
    if (this.multi) {
      const verdict = this.multi.hitAll(plan.keys, plan.windows);
      if (verdict instanceof Promise) return verdict.then((v) => this.settle(plan, v, reply, upstream));
      return this.settle(plan, verdict, reply, upstream);
    }
    return this.viaStock(plan).then((v) => this.settle(plan, v, reply, upstream));
  }

  /** Counts one request of an end user (a token's `sub`) against the consumer's per-user windows. */
  admitUser(consumer: Consumer, subject: string): void | Promise<void> {
    // The per-user windows need the multi-window storage (both kept stores are); the stock one has none.
    if (this.multi) return admitUser(this.multi, consumer, subject);
  }

  private settle(
    plan: ConsumerPlan,
    verdict: QuotaVerdict | undefined,
    reply: HeaderSink,
    upstream: string,
  ): void {
    if (verdict === undefined) {
      // Storage down: fail open. Only what is known without it is said.
      reply.header('ratelimit-policy', plan.policy);
      return;
    }
    this.apply(plan, verdict, reply, upstream);
  }

  private apply(plan: ConsumerPlan, verdict: QuotaVerdict, reply: HeaderSink, upstream: string): void {
    // The window to report: a full one if refused (the longest wait), else the one with least left.
    let pick = 0;
    let pickRemaining = Infinity;
    let retryMs = 0;
    const now = this.clock.now();
    for (let i = 0; i < plan.windows.length; i++) {
      const w = plan.windows[i];
      const s = verdict.windows[i];
      const remaining = Math.max(0, w.limit - s.hits);
      plan.remaining[i] = remaining;
      plan.resetAt[i] = now + s.resetMs;
      if (!verdict.allowed) {
        if (s.hits >= w.limit && s.resetMs > retryMs) {
          retryMs = s.resetMs;
          pick = i;
        }
      } else if (remaining < pickRemaining) {
        pickRemaining = remaining;
        pick = i;
      }
    }
    const w = plan.windows[pick];
    const resetSeconds = Math.max(1, Math.ceil(verdict.windows[pick].resetMs / 1000));
    reply.header('ratelimit-limit', w.limit);
    reply.header('ratelimit-remaining', plan.remaining[pick]);
    reply.header('ratelimit-reset', resetSeconds);
    reply.header('ratelimit-policy', plan.policy);
    if (verdict.allowed) return;
    this.metrics.rateLimited.inc({ upstream, kind: 'consumer' });
    throw GatewayError.expected('CONSUMER_RATE_LIMITED', {
      retryAfterSeconds: resetSeconds,
      message: `Consumer "${plan.consumer.id}" has used its ${w.limit} requests of the "${w.name}" window; retry in ${resetSeconds} s.`,
    });
  }

  /** Any other ThrottlerStorage (the stock one, for comparison benchmarks): one increment per window. */
  private async viaStock(plan: ConsumerPlan): Promise<QuotaVerdict> {
    const records = await Promise.all(
      plan.windows.map((w, i) => this.storage.increment(plan.keys[i], w.ttlMs, w.limit, w.ttlMs, w.name)),
    );
    return {
      allowed: records.every((r) => !r.isBlocked),
      windows: records.map((r) => ({
        hits: r.totalHits,
        resetMs: (r.isBlocked ? r.timeToBlockExpire : r.timeToExpire) * 1000,
      })),
    };
  }
}
