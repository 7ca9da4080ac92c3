import { FleetHeartbeat } from './limits/fleet-heartbeat.js';
import { subscriberConnection } from '../core/redis/redis-connection.js';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { SharedRedis } from '../core/ports/redis.port.js';
import { Counter, type Registry } from 'prom-client';
import { ATRIUM_CONFIG, type AtriumConfig, type UpstreamLimitsConfig } from '../config/atrium-config.js';
import { CONSUMER_STORE } from '../core/auth/consumer-auth.guard.js';
import type { ConsumerStore } from '../core/auth/consumer-store.service.js';
import { METRICS_REGISTRY } from '../core/ports/metrics.port.js';
import { REDIS_CLIENT, type RedisClient } from '../core/ports/redis.port.js';
import {
  collectedGauge,
  rateLimitedCounter,
  redisErrorsCounter,
} from '../core/throttling/throttling.metrics.js';
import { BREAKER_STATE_VALUE } from './limits/circuit-breaker.js';
import { parseCooldownMessage, RedisBudgetStore } from './limits/redis-budget.store.js';
import { UpstreamLimiter } from './limits/upstream-limiter.js';
import type { UpstreamDefinition } from './upstream-definition.js';

// The shared state is read every so often for readiness, metrics and any cooldown missed on pub/sub.
const STATUS_EVERY_MS = 2_000;
/** Replicas beat every second; one not heard from for 5 s no longer counts in the fleet's size. */
const HEARTBEAT_EVERY_MS = 1_000;
const HEARTBEAT_WINDOW_MS = 5_000;

/**
 * One UpstreamLimiter per upstream, built from that upstream's config, sharing the fleet's state through
 * Redis when REDIS_URL is set: a pub/sub channel spreads cooldowns to every replica at once.
 */
@Injectable()
export class UpstreamLimitsService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('UpstreamLimits');
  private readonly limiters = new Map<string, UpstreamLimiter>();
  private readonly channel: string;
  private readonly redisErrors: () => void;
  private readonly retries: Counter<'upstream'>;
  private subscriber?: SharedRedis;
  private statusTimer?: NodeJS.Timeout;
  /** Counts the replicas sharing Redis, for each one's share of the budget while Redis is away. */
  private readonly heartbeat?: FleetHeartbeat;

  constructor(
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient,
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    @Inject(CONSUMER_STORE) private readonly consumers: ConsumerStore,
  ) {
    this.channel = `${config.redisPrefix}limits:cooldown`;
    if (redis)
      this.heartbeat = new FleetHeartbeat(redis, {
        prefix: config.redisPrefix,
        everyMs: HEARTBEAT_EVERY_MS,
        windowMs: HEARTBEAT_WINDOW_MS,
      });
    const errors = redisErrorsCounter(registry).labels({ component: 'limits' });
    this.redisErrors = () => errors.inc();
    this.retries =
      (registry.getSingleMetric('atrium_upstream_retries_total') as Counter<'upstream'> | undefined) ??
      new Counter({
        name: 'atrium_upstream_retries_total',
        help: 'Retries of idempotent upstream calls (each one passed the retry budget and the limiter).',
        labelNames: ['upstream'] as const,
        registers: [registry],
      });
  }

  /**
   * The limiter of an upstream, built once from its config: the limit stage admits every attempt through it
   * (retries included), as does the signed-link pipeline, so each call and each retry spends one budget.
   */
  limiterFor(def: UpstreamDefinition): UpstreamLimiter {
    const u = this.config.upstreams[def.name];
    if (!u) throw new Error(`limits: no configuration for upstream ${def.name}`);
    if (this.limiters.has(def.name)) throw new Error(`limits: upstream ${def.name} built twice`);
    const l = u.limits;
    let maxCost = 1;
    for (const r of def.routes) {
      const cost = r.cost ?? 1;
      if (!(Number.isInteger(cost) && cost >= 1))
        throw new Error(`limits: route ${r.id} has cost ${cost}; costs are whole numbers ≥ 1`);
      maxCost = Math.max(maxCost, cost);
    }
    const shared = this.redis
      ? new RedisBudgetStore(this.redis, this.config.redisPrefix, def.name, this.channel, {
          configuredRate: u.ratePerSec,
          burst: u.burst,
          minRate: l.aimd.minRate,
          maxRate: l.aimd.maxRate,
          increasePerSec: l.aimd.increasePerSec,
          aimd: l.aimd.enabled,
          decrease: l.aimd.decrease,
          cooldownDefaultSeconds: l.cooldown.defaultSeconds,
          cooldownMaxSeconds: l.cooldown.maxSeconds,
        })
      : undefined;
    const limiter = new UpstreamLimiter(
      {
        upstream: def.name,
        title: def.title,
        ratePerSec: u.ratePerSec,
        burst: u.burst,
        maxWaitMs: l.maxWaitMs,
        localShare: l.localShare,
        aimd: l.aimd,
        breaker: l.breaker,
        cooldown: l.cooldown,
        maxCost,
      },
      {
        shared,
        reservedShareOf: (id) => this.consumers.get(id)?.reservedShare ?? 0,
        onRedisError: this.redisErrors,
        log: { log: (m) => this.logger.log(m), warn: (m) => this.logger.warn(m) },
        fleetShare: () => this.heartbeat?.share(),
      },
    );
    this.limiters.set(def.name, limiter);
    return limiter;
  }

  /** The retry settings of an upstream's limit stage. */
  retrySettings(upstream: string): UpstreamLimitsConfig['retry'] {
    const u = this.config.upstreams[upstream];
    if (!u) throw new Error(`limits: no configuration for upstream ${upstream}`);
    return u.limits.retry;
  }

  /** Counts every 429 UPSTREAM_RATE_LIMITED the limit stage passes on. */
  rateLimitedRecorder(upstream: string): () => void {
    const c = rateLimitedCounter(this.registry).labels({ upstream, kind: 'upstream' });
    return () => c.inc();
  }

  /** Counts the retries of the limit stage. */
  retryRecorder(upstream: string): () => void {
    const c = this.retries.labels({ upstream });
    return () => c.inc();
  }

  /** Breaker, cooldown and budget of an upstream, for `/health/ready` (empty before its pipeline exists). */
  facts(upstream: string): Record<string, unknown> {
    const l = this.limiters.get(upstream);
    return l ? { ...l.facts() } : {};
  }

  limiter(name: string): UpstreamLimiter | undefined {
    return this.limiters.get(name);
  }

  all(): UpstreamLimiter[] {
    return [...this.limiters.values()];
  }

  onModuleInit(): void {
    this.registerGauges();
    if (!this.redis) return;
    this.heartbeat?.start();
    this.subscribe(this.redis);
    this.statusTimer = setInterval(() => {
      for (const l of this.limiters.values()) void l.refreshShared();
    }, STATUS_EVERY_MS);
    this.statusTimer.unref();
  }

  private subscribe(redis: SharedRedis): void {
    // A subscribed connection can do nothing else: a second one.
    const sub = subscriberConnection(redis);
    this.subscriber = sub;
    sub.on('error', () => undefined); // the shared client's lifecycle logs Redis outages
    sub.on('message', (_channel: string, message: string) => {
      const m = parseCooldownMessage(message);
      const limiter = m && this.limiters.get(m.upstream);
      if (!limiter) return;
      if (m.cooldownMs < 0) limiter.liftLocal();
      else limiter.adoptCooldown(m.cooldownMs, m.rate);
    });
    // On every (re)connect: also covers a first SUBSCRIBE that failed because Redis was down at boot.
    sub.on('ready', () => {
      sub.subscribe(this.channel).catch((e: Error) => this.logger.warn(`cooldown channel: ${e.message}`));
    });
  }

  private registerGauges(): void {
    const r = this.registry;
    const each =
      (read: (l: UpstreamLimiter) => number) =>
      (set: (labels: { upstream: string }, v: number) => void): void => {
        for (const l of this.limiters.values()) set({ upstream: l.name }, read(l));
      };
    collectedGauge(
      r,
      'atrium_fleet_replicas_seen',
      'Replicas sharing Redis at the last heartbeat (0 before any); the budget share of each while Redis is away is 1 over this.',
      [] as const,
      (set) => set({}, this.heartbeat?.replicasSeen ?? 0),
    );
    collectedGauge(
      r,
      'atrium_upstream_budget_tokens',
      'Tokens left in the upstream budget (shared bucket as last read, or the local one).',
      ['upstream'] as const,
      each((l) => l.tokensLeft()),
    );
    collectedGauge(
      r,
      'atrium_upstream_rate_configured',
      'Configured upstream budget, requests per second.',
      ['upstream'] as const,
      each((l) => l.options.ratePerSec),
    );
    collectedGauge(
      r,
      'atrium_upstream_rate_learned',
      'Learned (AIMD) upstream rate, requests per second.',
      ['upstream'] as const,
      each((l) => l.learnedRate()),
    );
    collectedGauge(
      r,
      'atrium_upstream_cooldown_seconds',
      'Seconds left of the cooldown after an upstream 429 (0 when none).',
      ['upstream'] as const,
      each((l) => l.cooldownRemainingMs() / 1000),
    );
    collectedGauge(
      r,
      'atrium_upstream_breaker_state',
      'Circuit breaker per upstream: 0 closed, 1 half-open, 2 open.',
      ['upstream'] as const,
      each((l) => BREAKER_STATE_VALUE[l.breakerState()]),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.statusTimer) clearInterval(this.statusTimer);
    await this.heartbeat?.stop();
    for (const l of this.limiters.values()) l.close();
    const sub = this.subscriber;
    if (sub) {
      try {
        await sub.quit();
      } catch {
        sub.disconnect();
      }
    }
  }
}
