import type { RedisBudgetStore } from './redis-budget.store.js';
import type { GatewayError } from '../../core/errors/gateway-error.js';
import type { ProxyRequest } from '../pipeline.types.js';
import { BudgetSource } from './budget-source.js';
import { BREAKER_REFUSED, type BreakerState, type BreakerTicket } from './circuit-breaker.js';
import { boundedRetryAfter, decideLocalCooldown } from './cooldown.policy.js';
import {
  budgetSpentError,
  circuitOpenError,
  coolingDownError,
  RefusalMemo,
  retryAfterSeconds,
  shuttingDownError,
} from './limiter-errors.js';
import {
  validateLimiterOptions,
  type BudgetMode,
  type UpstreamLimitFacts,
  type UpstreamLimiterDeps,
  type UpstreamLimiterOptions,
} from './limiter-options.js';
import { UpstreamLimitState } from './limiter-state.js';
import { classifyOutcome, withRetryAfter } from './outcome.js';
import { TokenDispenser } from './token-dispenser.js';

export type { BudgetMode, UpstreamLimitFacts, UpstreamLimiterDeps, UpstreamLimiterOptions };

/**
 * One admitted attempt: the caller (the limit stage) keeps it and settles it once with the attempt's
 * outcome, so the limiter keeps nothing per request.
 */
export interface Permit {
  readonly ticket: BreakerTicket;
  settled: boolean;
}

const round = (n: number, digits: number): number => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * The rate-limit shield of one upstream, used by its limit stage (first attempts and retries alike):
 *
 * - **cooldown**: after an upstream 429 the upstream is left alone until its reset (fleet-wide through
 *   Redis); requests meanwhile get 429 with the remaining `Retry-After` at once. Afterwards the bucket
 *   starts empty at a lowered rate, so traffic comes back gradually (cooldown.policy.ts).
 * - **breaker**: see CircuitBreaker; open → 503 UPSTREAM_UNAVAILABLE (`CIRCUIT_OPEN`) at once.
 * - **budget**: a token bucket, shared through Redis or local (budget-source.ts); requests wait in a weighted
 *   fair queue for up to `maxWaitMs` (token-dispenser.ts), then get 429 UPSTREAM_RATE_LIMITED.
 * - **AIMD**: the learned rate halves (by default) on an upstream 429 and grows additively while calls
 *   succeed, within configured bounds.
 *
 * The state all of these read lives in UpstreamLimitState; this class sequences them per request. The
 * cooldown check costs no Redis round trip: a local copy is kept current by the cooldown script's pub/sub
 * message, by every take (which reads the cooldown key atomically) and by a periodic status read.
 */
export class UpstreamLimiter {
  readonly name: string;
  private readonly now: () => number;
  private readonly state: UpstreamLimitState;
  private readonly budget: BudgetSource;
  private readonly dispenser: TokenDispenser;
  /** The refusals of a cooldown and of an open breaker, one per whole second of `Retry-After`. */
  private readonly coolingError: RefusalMemo;
  private readonly openError: RefusalMemo;
  /** A cooldown started locally while Redis was away, not yet the fleet's. */
  private unpublishedCooldown = false;

  constructor(
    private readonly o: UpstreamLimiterOptions,
    private readonly deps: UpstreamLimiterDeps = {},
  ) {
    validateLimiterOptions(o);
    this.name = o.upstream;
    this.coolingError = new RefusalMemo((ms) => coolingDownError(o.upstream, o.title, ms));
    this.openError = new RefusalMemo((ms) => circuitOpenError(o.upstream, o.title, ms));
    this.now = deps.now ?? ((): number => Date.now());
    this.state = new UpstreamLimitState(o, deps.shared !== undefined, this.now());
    this.state.breaker.onChange = (from, to) =>
      to === 'open'
        ? deps.log?.warn(`${o.upstream}: circuit breaker ${from} → open for ${o.breaker.openMs} ms`)
        : deps.log?.log(`${o.upstream}: circuit breaker ${from} → ${to}`);
    this.budget = new BudgetSource(this.state, {
      name: o.upstream,
      localShare: o.localShare,
      burst: o.burst,
      shared: deps.shared,
      now: this.now,
      onRedisError: deps.onRedisError,
      log: deps.log,
      fleetShare: deps.fleetShare,
    });
    this.dispenser = new TokenDispenser({
      name: o.upstream,
      burst: o.burst,
      budget: this.budget,
      now: this.now,
      reservedShareOf: deps.reservedShareOf,
      onCooldown: (ms, rate) => this.adoptCooldown(ms, rate),
      budgetError: (cost) =>
        budgetSpentError(o.upstream, o.title, this.dispenser.cost + cost, this.budget.effectiveRate()),
      warn: (m) => deps.log?.warn(m),
    });
  }

  get mode(): BudgetMode {
    return this.budget.mode;
  }

  get options(): UpstreamLimiterOptions {
    return this.o;
  }

  // ---------------------------------------------------------------------------------------------
  // Admission

  /** Before the first attempt: cooldown, breaker, then a token (waiting fairly up to `maxWaitMs`). */
  acquire(req: ProxyRequest): Promise<Permit> {
    return this.admit(req, Math.min(req.deadline, this.now() + this.o.maxWaitMs));
  }

  /** What `acquire` would refuse at once now: cooldown, then an open breaker (no token, no state change). */
  refuseNow(): GatewayError | undefined {
    const now = this.now();
    const cooling = this.state.cooldownRemainingMs(now);
    if (cooling > 0) return this.cooldownError(cooling);
    const breaker = this.state.breaker;
    if (breaker.state(now) === 'open') return this.openError.at(breaker.openRemainingMs(now));
    return undefined;
  }

  /** Before a retry: the same checks; the wait is bounded by the request's own deadline too. */
  acquireRetry(req: ProxyRequest): Promise<Permit> {
    return this.admit(req, Math.min(req.deadline, this.now() + this.o.maxWaitMs));
  }

  private async admit(req: ProxyRequest, deadline: number): Promise<Permit> {
    const now = this.now();
    const cooling = this.state.cooldownRemainingMs(now);
    if (cooling > 0) throw this.cooldownError(cooling);
    const ticket = this.state.breaker.tryAcquire(now);
    if (ticket === BREAKER_REFUSED) throw this.openError.at(this.state.breaker.openRemainingMs(now));
    try {
      await this.dispenser.tokens(req.route.cost ?? 1, req, deadline);
      // A cooldown may have begun while this request waited (another replica's 429): its token is dropped.
      const left = this.state.cooldownRemainingMs(this.now());
      if (left > 0) throw this.cooldownError(left);
    } catch (e) {
      this.state.breaker.release(ticket);
      throw e;
    }
    return { ticket, settled: false };
  }

  // ---------------------------------------------------------------------------------------------
  // Outcomes

  settleSuccess(permit: Permit): void {
    if (permit.settled) return;
    permit.settled = true;
    const now = this.now();
    this.state.breaker.onSuccess(now, permit.ticket);
    this.state.shared.lastCallOk = true;
    if (this.mode !== 'shared') {
      this.state.aimd.onSuccess(now);
      this.budget.syncBucketRate(now);
    }
  }

  /**
   * Records a failed attempt once and returns the error to pass on: for an upstream 429, with the
   * cooldown's `Retry-After`.
   */
  async settleError(permit: Permit, err: unknown): Promise<unknown> {
    if (permit.settled) return err;
    permit.settled = true;
    const now = this.now();
    const breaker = this.state.breaker;
    switch (classifyOutcome(err)) {
      case 'failure':
        this.state.shared.lastCallOk = false;
        breaker.onFailure(now, permit.ticket);
        return err;
      case 'alive':
        breaker.onSuccess(now, permit.ticket);
        return err;
      case 'throttled':
        this.state.shared.lastCallOk = false;
        breaker.release(permit.ticket);
        return this.onUpstream429(err as GatewayError);
      default:
        breaker.release(permit.ticket);
        return err;
    }
  }

  /** The vendor said 429: cool the fleet down (its reset, else the growing default) and say until when. */
  private async onUpstream429(err: GatewayError): Promise<GatewayError> {
    const header = boundedRetryAfter(err, this.o.cooldown);
    let ms: number | undefined;
    const shared = this.budget.shared;
    if (shared?.ready) {
      try {
        const r = await shared.cooldown(header);
        this.budget.onSharedAnswer(0, r.rate);
        ms = r.cooldownMs;
        this.adoptCooldown(ms, r.rate, r.started === 1);
      } catch (e) {
        this.budget.onSharedError(e as Error);
      }
    }
    if (ms === undefined) {
      ms = this.localCooldown(header);
      // Redis is away: the fleet must learn of this cooldown when it returns (refreshShared).
      if (shared) this.unpublishedCooldown = true;
    }
    return withRetryAfter(err, retryAfterSeconds(ms));
  }

  private localCooldown(header: number | undefined): number {
    const now = this.now();
    const d = decideLocalCooldown(this.state.cooldown, header, now, this.o.cooldown);
    if (d.kind === 'extend') this.adoptCooldown(d.ms, undefined, false);
    else if (d.kind === 'start') {
      this.state.cooldown.streak = d.streak;
      this.state.cooldown.streakUntil = d.streakUntil;
      this.adoptCooldown(d.ms, this.state.aimd.onThrottled(now), true);
    }
    return d.ms;
  }

  /**
   * The fleet (or this replica) is cooling down for `ms`: refuse the waiting requests at once, drop prepaid
   * tokens and restart the local bucket empty at the cooldown's end.
   */
  adoptCooldown(ms: number, rate?: number, announce = false): void {
    const now = this.now();
    const until = now + ms;
    const cooldown = this.state.cooldown;
    if (rate !== undefined) this.state.aimd.adopt(rate);
    const fresh = cooldown.until <= now;
    if (until > cooldown.until) {
      cooldown.until = until;
      this.dispenser.dropPrepaid();
      this.state.bucket.drain(until);
      this.budget.syncBucketRate(now);
    }
    const left = cooldown.until - now;
    this.dispenser.refuseAll(() => this.cooldownError(left));
    if (announce || (fresh && left > 0))
      this.deps.log?.warn(
        `${this.name}: the upstream is rate limiting; cooling down for ${Math.ceil(ms / 1000)} s (learned rate ${round(this.state.aimd.rate, 2)}/s)`,
      );
  }

  /**
   * Operator action: ends the cooldown now (the vendor lifted its block), for the whole fleet when shared.
   * The bucket refills from now; the learned rate is kept.
   */
  async liftCooldown(): Promise<void> {
    this.liftLocal();
    const shared = this.budget.shared;
    if (shared?.ready) await shared.lift();
    this.deps.log?.log(`${this.name}: cooldown lifted by an operator`);
  }

  /**
   * A cooldown this replica started while Redis was away, published once Redis answers again: what is left
   * of it becomes the fleet's cooldown (the script announces it to every replica), unless the fleet already
   * cools down at least as long.
   */
  private async publishLocalCooldown(shared: RedisBudgetStore, fleetMs: number): Promise<void> {
    const left = this.state.cooldownRemainingMs(this.now());
    if (left > fleetMs + 1000) {
      const r = await shared.cooldown(Math.ceil(left / 1000));
      this.deps.log?.log(`${this.name}: the cooldown kept during the Redis outage is the fleet's again`);
      this.adoptCooldown(r.cooldownMs, r.rate);
    }
    this.unpublishedCooldown = false;
  }

  /** Another replica lifted the cooldown. */
  liftLocal(): void {
    Object.assign(this.state.cooldown, { until: 0, streak: 0, streakUntil: 0 });
    this.state.bucket.reset(this.now(), 0);
  }

  /** Periodic read of the shared state (readiness, metrics, and a cooldown missed on pub/sub). */
  async refreshShared(): Promise<void> {
    const shared = this.budget.shared;
    if (!shared?.ready) return;
    try {
      const s = await shared.status();
      this.budget.onSharedAnswer(s.tokens, s.rate);
      if (s.cooldownMs > 0) this.adoptCooldown(s.cooldownMs, s.rate);
      if (this.unpublishedCooldown) await this.publishLocalCooldown(shared, s.cooldownMs);
    } catch (e) {
      this.budget.onSharedError(e as Error);
    }
  }

  private cooldownError(ms: number): GatewayError {
    return this.coolingError.at(ms);
  }

  // ---------------------------------------------------------------------------------------------
  // Visible state

  breakerState(): BreakerState {
    return this.state.breaker.state(this.now());
  }

  cooldownRemainingMs(): number {
    return this.state.cooldownRemainingMs(this.now());
  }

  learnedRate(): number {
    return this.state.aimd.rate;
  }

  tokensLeft(): number {
    return this.budget.tokensLeft(this.now());
  }

  facts(): UpstreamLimitFacts {
    return {
      breaker: this.breakerState(),
      cooldownRemainingSeconds: Math.ceil(this.cooldownRemainingMs() / 1000),
      bucket: {
        configuredRatePerSec: this.o.ratePerSec,
        learnedRatePerSec: round(this.state.aimd.rate, 3),
        burst: this.o.burst,
        tokens: round(this.tokensLeft(), 2),
      },
      budget: this.mode,
      fallbackShare: round(this.budget.fallbackShare, 4),
      queued: this.dispenser.size,
    };
  }

  /** Refuses whoever still waits (shutdown). */
  close(): void {
    this.dispenser.refuseAll(() => shuttingDownError(this.name));
  }
}
