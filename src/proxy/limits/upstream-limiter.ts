import { GatewayError } from '../../core/errors/gateway-error.js';
import type { ProxyRequest } from '../pipeline.types.js';
import { AimdRate, type AimdOptions } from './aimd.js';
import {
  BREAKER_REFUSED,
  CircuitBreaker,
  type BreakerOptions,
  type BreakerState,
  type BreakerTicket,
} from './circuit-breaker.js';
import { FairQueue, type FairItem } from './fair-queue.js';
import { classifyOutcome, withRetryAfter } from './outcome.js';
import type { RedisBudgetStore } from './redis-budget.store.js';
import { TokenBucket } from './token-bucket.js';

export interface UpstreamLimiterOptions {
  readonly upstream: string;
  /** "the macroeconomic data service" (messages). */
  readonly title: string;
  /** Configured budget: requests (tokens) per second and burst. */
  readonly ratePerSec: number;
  readonly burst: number;
  /** Longest wait for a token before 429 UPSTREAM_RATE_LIMITED. */
  readonly maxWaitMs: number;
  /** Share of the budget this replica may spend alone while the shared bucket is unreachable. */
  readonly localShare: number;
  readonly aimd: Omit<AimdOptions, 'configured'>;
  readonly breaker: BreakerOptions;
  /**
   * Cooldown after an upstream 429: `defaultSeconds` without a usable reset header (doubling on repeats),
   * and `maxSeconds`, the longest cooldown of any kind: a vendor's own `Retry-After` is capped at it too.
   */
  readonly cooldown: { readonly defaultSeconds: number; readonly maxSeconds: number };
  /** The largest route cost of this upstream (checked against the burst at start-up). */
  readonly maxCost: number;
}

export interface UpstreamLimiterDeps {
  /** The fleet's bucket and cooldown; absent → this replica's own bucket (single instance). */
  readonly shared?: RedisBudgetStore;
  readonly now?: () => number;
  /** Reserved share of a consumer's traffic (0 when none). */
  readonly reservedShareOf?: (consumerId: string) => number;
  /** A Redis call failed and the local fallback answered. */
  readonly onRedisError?: () => void;
  readonly log?: { log(message: string): void; warn(message: string): void };
}

export type BudgetMode = 'local' | 'shared' | 'local-fallback';

/** What `/health/ready` shows per upstream (the operator console reads these names). */
export interface UpstreamLimitFacts {
  breaker: BreakerState;
  cooldownRemainingSeconds: number;
  bucket: { configuredRatePerSec: number; learnedRatePerSec: number; burst: number; tokens: number };
  budget: BudgetMode;
  queued: number;
}

interface Waiter extends FairItem {
  resolve(): void;
  reject(err: GatewayError): void;
  timer?: NodeJS.Timeout;
  /** Handed a token. */
  done?: boolean;
}

interface Permit {
  readonly ticket: BreakerTicket;
  settled: boolean;
}

interface Take {
  granted: number;
  waitMs: number;
  /** > 0: the fleet is cooling down for that long. */
  cooldownMs: number;
  rate?: number;
}

function validate(o: UpstreamLimiterOptions): void {
  const where = `limits ${o.upstream}`;
  if (!(o.ratePerSec > 0)) throw new Error(`${where}: ratePerSec must be > 0`);
  if (!(o.burst >= 1)) throw new Error(`${where}: burst must be ≥ 1`);
  if (!(o.maxWaitMs >= 0)) throw new Error(`${where}: maxWaitMs must be ≥ 0`);
  if (!(o.localShare > 0 && o.localShare <= 1)) throw new Error(`${where}: localShare must be in (0, 1]`);
  if (!(o.maxCost >= 1) || o.maxCost > o.burst)
    throw new Error(`${where}: a route costs ${o.maxCost} tokens but the burst is ${o.burst}`);
  if (!(o.cooldown.defaultSeconds >= 1) || o.cooldown.maxSeconds < o.cooldown.defaultSeconds)
    throw new Error(`${where}: need 1 ≤ cooldown default ≤ cooldown max`);
}

// Timers of the limiter never keep a process alive on their own (the requests waiting on them do).
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Failed takes in a row on a connected Redis before the local fallback bucket is used. */
const SLOW_TAKES_BEFORE_FALLBACK = 3;

const round = (n: number, digits: number): number => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * The rate-limit shield of one upstream, shared by its limit and retry stages:
 *
 * - **cooldown**: after an upstream 429 the upstream is left alone until its reset (fleet-wide through
 *   Redis); requests meanwhile get 429 with the remaining `Retry-After` at once. Afterwards the bucket
 *   starts empty at a lowered rate, so traffic comes back gradually.
 * - **breaker**: see CircuitBreaker; open → 503 UPSTREAM_UNAVAILABLE (`CIRCUIT_OPEN`) at once.
 * - **budget**: a token bucket, shared through Redis (one atomic script per grant) or local; requests wait
 *   in a weighted fair queue for up to `maxWaitMs`, then get 429 UPSTREAM_RATE_LIMITED. Redis configured
 *   but unreachable → a local bucket holding only this replica's share, never unlimited.
 * - **AIMD**: the learned rate halves (by default) on an upstream 429 and grows additively while calls
 *   succeed, within configured bounds.
 *
 * The cooldown check costs no Redis round trip: a local copy is kept current by the cooldown script's
 * pub/sub message, by every take (which reads the cooldown key atomically) and by a periodic status read.
 */
export class UpstreamLimiter {
  readonly name: string;
  private readonly now: () => number;
  private readonly breaker: CircuitBreaker;
  private readonly aimd: AimdRate;
  /** The local bucket: the whole budget (single instance) or this replica's share (fallback). */
  private readonly bucket: TokenBucket;
  private readonly queue = new FairQueue<Waiter>();
  private readonly permits = new WeakMap<ProxyRequest, Permit>();
  private readonly shared?: RedisBudgetStore;
  private readonly burstForTakes: number;
  private prepaid = 0;
  private pumping = false;
  /** A take is on its way to Redis: waiters whose bound passes meanwhile wait for its answer. */
  private taking = false;
  private readonly expiredDuringTake: Waiter[] = [];
  private cooldownUntil = 0;
  private streak = 0;
  private streakUntil = 0;
  private lastOk = true;
  private sharedFailing = false;
  private sharedTimeouts = 0;
  private lastShared?: { tokens: number; rate: number; at: number };

  constructor(
    private readonly o: UpstreamLimiterOptions,
    private readonly deps: UpstreamLimiterDeps = {},
  ) {
    validate(o);
    this.name = o.upstream;
    this.now = deps.now ?? ((): number => Date.now());
    this.shared = deps.shared;
    const now = this.now();
    this.aimd = new AimdRate({ ...o.aimd, configured: o.ratePerSec }, now);
    this.breaker = new CircuitBreaker(o.breaker);
    this.breaker.onChange = (from, to) =>
      to === 'open'
        ? this.deps.log?.warn(`${o.upstream}: circuit breaker ${from} → open for ${o.breaker.openMs} ms`)
        : this.deps.log?.log(`${o.upstream}: circuit breaker ${from} → ${to}`);
    const fallbackBurst = Math.max(o.maxCost, Math.round(o.burst * o.localShare));
    this.bucket = this.shared
      ? new TokenBucket(this.aimd.rate * o.localShare, fallbackBurst, now)
      : new TokenBucket(this.aimd.rate, o.burst, now);
    this.burstForTakes = o.burst;
  }

  get mode(): BudgetMode {
    if (!this.shared) return 'local';
    return this.sharedFailing || !this.shared.ready ? 'local-fallback' : 'shared';
  }

  get options(): UpstreamLimiterOptions {
    return this.o;
  }

  // ---------------------------------------------------------------------------------------------
  // Admission

  /** Before the first attempt: cooldown, breaker, then a token (waiting fairly up to `maxWaitMs`). */
  acquire(req: ProxyRequest): Promise<void> {
    return this.admit(req, Math.min(req.deadline, this.now() + this.o.maxWaitMs));
  }

  /** Before a retry: the same checks; the wait is bounded by the request's own deadline too. */
  acquireRetry(req: ProxyRequest): Promise<void> {
    return this.admit(req, Math.min(req.deadline, this.now() + this.o.maxWaitMs));
  }

  private async admit(req: ProxyRequest, deadline: number): Promise<void> {
    const now = this.now();
    const cooling = this.cooldownUntil - now;
    if (cooling > 0) throw this.cooldownError(cooling);
    const ticket = this.breaker.tryAcquire(now);
    if (ticket === BREAKER_REFUSED) throw this.circuitOpenError(now);
    try {
      await this.tokens(req, deadline);
      // A cooldown may have begun while this request waited (another replica's 429): its token is dropped.
      const left = this.cooldownUntil - this.now();
      if (left > 0) throw this.cooldownError(left);
    } catch (e) {
      this.breaker.release(ticket);
      throw e;
    }
    this.permits.set(req, { ticket, settled: false });
  }

  private tokens(req: ProxyRequest, deadline: number): Promise<void> | void {
    const cost = req.route.cost ?? 1;
    const now = this.now();
    if (this.queue.size === 0) {
      if (this.prepaid >= cost) {
        this.prepaid -= cost;
        return;
      }
      if (this.mode !== 'shared') {
        // The local bucket answers synchronously: no queue while there are tokens.
        const r = this.bucket.take(cost, cost, now);
        if (r.granted > 0) return;
        if (now + r.waitMs > deadline) throw this.budgetError(cost);
      }
    }
    if (deadline <= now) throw this.budgetError(cost);
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { cost, resolve, reject };
      this.queue.push(req.consumerId, req.weight, this.deps.reservedShareOf?.(req.consumerId) ?? 0, w);
      w.timer = setTimeout(() => {
        // The bound is on waiting for tokens, not on the round trip that may be fetching one right now.
        if (this.taking) this.expiredDuringTake.push(w);
        else this.expire(w);
      }, deadline - now);
      w.timer.unref();
      this.kick();
    });
  }

  private kick(): void {
    if (this.pumping) return;
    this.pump().catch((e: unknown) =>
      this.deps.log?.warn(`${this.name}: token dispenser failed: ${(e as Error).message}`),
    );
  }

  /** One loop per upstream hands tokens to waiters in fair order; it runs only while someone waits. */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.queue.size > 0) {
        this.dispatchCovered();
        if (this.queue.size === 0) break;
        const head = this.queue.peek(this.now())!;
        const min = head.cost - this.prepaid;
        const want = Math.max(min, Math.min(this.queue.cost, this.burstForTakes) - this.prepaid);
        this.taking = true;
        let r: Take;
        try {
          r = await this.take(want, min);
        } finally {
          this.taking = false;
        }
        if (r.cooldownMs > 0) this.adoptCooldown(r.cooldownMs, r.rate);
        else {
          this.prepaid += r.granted;
          this.dispatchCovered();
        }
        for (const w of this.expiredDuringTake.splice(0)) this.expire(w);
        if (r.cooldownMs > 0) continue;
        if (r.granted === 0 && this.queue.size > 0) await sleep(Math.min(1000, Math.max(1, r.waitMs)));
      }
    } finally {
      this.pumping = false;
    }
  }

  private expire(w: Waiter): void {
    if (!w.done && this.queue.cancel(w)) w.reject(this.budgetError(w.cost));
  }

  private dispatchCovered(): void {
    while (this.queue.size > 0) {
      const now = this.now();
      const head = this.queue.peek(now)!;
      if (this.prepaid < head.cost) return;
      this.queue.shift(now);
      this.prepaid -= head.cost;
      clearTimeout(head.timer);
      head.done = true;
      head.resolve();
    }
  }

  private async take(want: number, min: number): Promise<Take> {
    const shared = this.shared;
    if (shared) {
      if (shared.ready) {
        try {
          const r = await shared.take(want, min, this.lastOk);
          this.sharedTimeouts = 0;
          this.onSharedAnswer(r.tokens, r.rate);
          if (r.granted < 0) return { granted: 0, waitMs: 0, cooldownMs: r.waitMs, rate: r.rate };
          return { granted: r.granted, waitMs: r.waitMs, cooldownMs: 0 };
        } catch (e) {
          // Connected but slow: the fleet may be cooling down or out of tokens. Ask again shortly rather
          // than spend local tokens, unless it keeps failing.
          if (++this.sharedTimeouts < SLOW_TAKES_BEFORE_FALLBACK) {
            this.deps.onRedisError?.();
            return { granted: 0, waitMs: 20, cooldownMs: 0 };
          }
          this.onSharedError(e as Error);
        }
      } else this.onSharedError(new Error(`Redis is ${shared.redis.status}`));
    }
    const r = this.bucket.take(want, min, this.now());
    return { granted: r.granted, waitMs: r.waitMs, cooldownMs: 0 };
  }

  private onSharedAnswer(tokens: number, rate: number): void {
    this.lastShared = { tokens, rate, at: this.now() };
    this.aimd.adopt(rate);
    if (this.sharedFailing) {
      this.sharedFailing = false;
      this.deps.log?.log(`${this.name}: Redis answers again; back on the fleet's shared budget`);
    }
  }

  private onSharedError(e: Error): void {
    this.deps.onRedisError?.();
    if (!this.sharedFailing) {
      this.sharedFailing = true;
      this.bucket.setRate(this.aimd.rate * this.o.localShare, this.now());
      this.deps.log?.warn(
        `${this.name}: shared budget unavailable (${e.message}); spending this replica's ${Math.round(this.o.localShare * 100)} % share locally`,
      );
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Outcomes

  settleSuccess(req: ProxyRequest): void {
    const permit = this.permits.get(req);
    if (!permit || permit.settled) return;
    permit.settled = true;
    const now = this.now();
    this.breaker.onSuccess(now, permit.ticket);
    this.lastOk = true;
    if (this.mode !== 'shared') {
      this.aimd.onSuccess(now);
      this.syncBucketRate(now);
    }
  }

  /**
   * Records a failed attempt once (the retry stage settles the attempts it retries, the limit stage the
   * last one) and returns the error to pass on: for an upstream 429, with the cooldown's `Retry-After`.
   */
  async settleError(req: ProxyRequest, err: unknown): Promise<unknown> {
    const permit = this.permits.get(req);
    if (!permit || permit.settled) return err;
    permit.settled = true;
    const now = this.now();
    switch (classifyOutcome(err)) {
      case 'failure':
        this.lastOk = false;
        this.breaker.onFailure(now, permit.ticket);
        return err;
      case 'alive':
        this.breaker.onSuccess(now, permit.ticket);
        return err;
      case 'throttled':
        this.lastOk = false;
        this.breaker.release(permit.ticket);
        return this.onUpstream429(err as GatewayError);
      default:
        this.breaker.release(permit.ticket);
        return err;
    }
  }

  /** The vendor said 429: cool the fleet down (its reset, else the growing default) and say until when. */
  private async onUpstream429(err: GatewayError): Promise<GatewayError> {
    // An absurd header (`Retry-After: 999999999`, a date years ahead) must not shut the upstream for long:
    // the configured maximum bounds what the vendor asks for, as it bounds the growing default.
    const header =
      err.retryAfterSeconds === undefined
        ? undefined
        : Math.min(err.retryAfterSeconds, this.o.cooldown.maxSeconds);
    let ms: number | undefined;
    if (this.shared?.ready) {
      try {
        const r = await this.shared.cooldown(header);
        this.onSharedAnswer(0, r.rate);
        ms = r.cooldownMs;
        this.adoptCooldown(ms, r.rate, r.started === 1);
      } catch (e) {
        this.onSharedError(e as Error);
      }
    }
    ms ??= this.localCooldown(header);
    return withRetryAfter(err, Math.max(1, Math.ceil(ms / 1000)));
  }

  private localCooldown(header: number | undefined): number {
    const now = this.now();
    const remaining = this.cooldownUntil - now;
    if (remaining > 0) {
      if (header === undefined || header * 1000 <= remaining) return remaining;
      this.adoptCooldown(header * 1000, undefined, false);
      return header * 1000;
    }
    let seconds: number;
    if (header === undefined) {
      this.streak = now < this.streakUntil ? this.streak + 1 : 0;
      seconds = Math.min(this.o.cooldown.maxSeconds, this.o.cooldown.defaultSeconds * 2 ** this.streak);
      this.streakUntil = now + seconds * 2000;
    } else {
      seconds = header;
      this.streak = 0;
      this.streakUntil = 0;
    }
    const rate = this.aimd.onThrottled(now);
    this.adoptCooldown(seconds * 1000, rate, true);
    return seconds * 1000;
  }

  /**
   * The fleet (or this replica) is cooling down for `ms`: refuse the waiting requests at once, drop prepaid
   * tokens and restart the local bucket empty at the cooldown's end.
   */
  adoptCooldown(ms: number, rate?: number, announce = false): void {
    const now = this.now();
    const until = now + ms;
    if (rate !== undefined) this.aimd.adopt(rate);
    const fresh = this.cooldownUntil <= now;
    if (until > this.cooldownUntil) {
      this.cooldownUntil = until;
      this.prepaid = 0;
      this.bucket.drain(until);
      this.syncBucketRate(now);
    }
    const left = this.cooldownUntil - now;
    for (const w of this.queue.drain()) {
      clearTimeout(w.timer);
      w.reject(this.cooldownError(left));
    }
    if (announce || (fresh && left > 0))
      this.deps.log?.warn(
        `${this.name}: the upstream is rate limiting; cooling down for ${Math.ceil(ms / 1000)} s (learned rate ${round(this.aimd.rate, 2)}/s)`,
      );
  }

  /**
   * Operator action: ends the cooldown now (the vendor lifted its block), for the whole fleet when shared.
   * The bucket refills from now; the learned rate is kept.
   */
  async liftCooldown(): Promise<void> {
    this.liftLocal();
    if (this.shared?.ready) await this.shared.lift();
    this.deps.log?.log(`${this.name}: cooldown lifted by an operator`);
  }

  /** Another replica lifted the cooldown. */
  liftLocal(): void {
    this.cooldownUntil = 0;
    this.streak = 0;
    this.streakUntil = 0;
    this.bucket.reset(this.now(), 0);
  }

  /** Periodic read of the shared state (readiness, metrics, and a cooldown missed on pub/sub). */
  async refreshShared(): Promise<void> {
    if (!this.shared?.ready) return;
    try {
      const s = await this.shared.status();
      this.onSharedAnswer(s.tokens, s.rate);
      if (s.cooldownMs > 0) this.adoptCooldown(s.cooldownMs, s.rate);
    } catch (e) {
      this.onSharedError(e as Error);
    }
  }

  private syncBucketRate(now: number): void {
    this.bucket.setRate(this.shared ? this.aimd.rate * this.o.localShare : this.aimd.rate, now);
  }

  // ---------------------------------------------------------------------------------------------
  // Errors and visible state

  private effectiveRate(): number {
    return this.mode === 'local-fallback' ? this.aimd.rate * this.o.localShare : this.aimd.rate;
  }

  private budgetError(cost: number): GatewayError {
    const seconds = Math.max(1, Math.ceil((this.queue.cost + cost) / this.effectiveRate()));
    return GatewayError.expected('UPSTREAM_RATE_LIMITED', {
      upstream: this.name,
      retryAfterSeconds: seconds,
      message: `The gateway's shared budget for ${this.o.title} is spent for now; retry in ${seconds} s.`,
    });
  }

  private cooldownError(ms: number): GatewayError {
    const seconds = Math.max(1, Math.ceil(ms / 1000));
    return GatewayError.expected('UPSTREAM_RATE_LIMITED', {
      upstream: this.name,
      retryAfterSeconds: seconds,
      message: `${capitalise(this.o.title)} is rate limiting the gateway; retry in ${seconds} s.`,
    });
  }

  private circuitOpenError(now: number): GatewayError {
    const seconds = Math.max(1, Math.ceil(this.breaker.openRemainingMs(now) / 1000));
    return GatewayError.expected('UPSTREAM_UNAVAILABLE', {
      upstream: this.name,
      upstreamCode: 'CIRCUIT_OPEN',
      retryAfterSeconds: seconds,
      message: `${capitalise(this.o.title)} is failing; the gateway stopped calling it for now.`,
    });
  }

  breakerState(): BreakerState {
    return this.breaker.state(this.now());
  }

  cooldownRemainingMs(): number {
    return Math.max(0, this.cooldownUntil - this.now());
  }

  learnedRate(): number {
    return this.aimd.rate;
  }

  tokensLeft(): number {
    const now = this.now();
    if (this.mode === 'shared' && this.lastShared) {
      if (this.cooldownUntil > now) return 0;
      const { tokens, rate, at } = this.lastShared;
      return Math.min(this.o.burst, tokens + (Math.max(0, now - at) * rate) / 1000);
    }
    return this.bucket.available(now);
  }

  facts(): UpstreamLimitFacts {
    return {
      breaker: this.breakerState(),
      cooldownRemainingSeconds: Math.ceil(this.cooldownRemainingMs() / 1000),
      bucket: {
        configuredRatePerSec: this.o.ratePerSec,
        learnedRatePerSec: round(this.aimd.rate, 3),
        burst: this.o.burst,
        tokens: round(this.tokensLeft(), 2),
      },
      budget: this.mode,
      queued: this.queue.size,
    };
  }

  /** Refuses whoever still waits (shutdown). */
  close(): void {
    for (const w of this.queue.drain()) {
      clearTimeout(w.timer);
      w.reject(
        new GatewayError('UPSTREAM_UNAVAILABLE', {
          upstream: this.name,
          message: 'The gateway is shutting down.',
        }),
      );
    }
  }
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
