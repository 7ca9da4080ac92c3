import { hostname } from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { CONSUMER_STORE } from '../core/auth/consumer-auth.guard.js';
import type { ConsumerStore } from '../core/auth/consumer-store.service.js';
import { ConsumerRegistry, type ConsumerSourceState } from '../core/auth/consumer-registry.service.js';
import { consumerView, type ConsumerKeyView } from '../admin/consumer-view.js';
import { ReadinessService, type UpstreamReadiness } from '../health/readiness.service.js';
import { METRICS_REGISTRY } from '../core/ports/metrics.port.js';
import { ProxyService } from '../proxy/proxy.service.js';
import { ViewsService, type ViewStats } from '../views/views.service.js';
import { WatchService, type MostWatched } from '../watch/watch.service.js';
import { RecentErrors, type ConsumerRejections, type ErrorEvent } from './recent-errors.service.js';

/** Metric names this console reads (COMMON contracts; each belongs to the issue that registers it). */
export const CONSOLE_METRICS = {
  requests: 'atrium_requests_total',
  upstreamRequests: 'atrium_upstream_requests_total',
  consumerRequests: 'atrium_consumer_requests_total',
  cacheEvents: 'atrium_cache_events_total',
  rateLimited: 'atrium_rate_limited_total',
  budgetTokens: 'atrium_upstream_budget_tokens',
  rateConfigured: 'atrium_upstream_rate_configured',
  rateLearned: 'atrium_upstream_rate_learned',
  cooldown: 'atrium_upstream_cooldown_seconds',
  breaker: 'atrium_upstream_breaker_state',
  quotaRemaining: 'atrium_consumer_quota_remaining',
} as const;

type Breaker = 'closed' | 'half-open' | 'open';
const BREAKER_OF_GAUGE: Record<number, Breaker> = { 0: 'closed', 1: 'half-open', 2: 'open' };
const CACHE_OUTCOMES = ['hit', 'miss', 'stale', 'coalesced', 'bypass'] as const;
type CacheCounts = Record<(typeof CACHE_OUTCOMES)[number], number>;

export interface UpstreamState {
  name: string;
  title?: string;
  /** Routed by this gateway (an interface module is loaded). */
  registered: boolean;
  sandbox: boolean;
  reachable: boolean | null;
  latencyMs: number | null;
  /** Client requests per second over the last sample interval; null = no metric. */
  requestsPerSec: number | null;
  /** Recent requests per second, oldest first (one point per sample). */
  history: number[];
  /**
   * Share of cache lookups answered without an upstream call (hit, stale, coalesced): over the recent
   * window, or since start when there was no lookup in it (`hitRatioSince`); null = no lookup yet.
   */
  hitRatio: number | null;
  hitRatioSince: 'recent' | 'start' | null;
  cache: CacheCounts | null;
  budget: {
    configuredRatePerSec: number;
    learnedRatePerSec: number | null;
    burst: number;
    tokens: number | null;
  };
  cooldownRemainingSeconds: number | null;
  breaker: Breaker | null;
  /** 429s since start by kind (consumer quota vs upstream budget/cooldown). */
  rateLimited: { consumer: number; upstream: number } | null;
  /** Upstream answers by status class in the recent window. */
  upstreamStatus: Record<string, number> | null;
  lastErrors: readonly ErrorEvent[];
}

export interface ConsumerState {
  id: string;
  /** Disabled by an operator: every key answers 403. */
  enabled: boolean;
  /** Ids and dates only (key rotation from the console goes through /admin/consumers). */
  keys: ConsumerKeyView[];
  /** End-user tokens the consumer accepts (its `oidc` block): the issuer and audience; null → keys only. */
  tokens: { issuer: string; audience: string[] } | null;
  upstreams: string[];
  write: boolean;
  weight: number;
  requestsPerSec: number | null;
  history: number[];
  /** Per quota window: the limit and, when the limiter reports it, what is left. */
  quota: Array<{
    window: string;
    ttlMs: number;
    limit: number;
    remaining: number | null;
    used: number | null;
  }>;
  rejections: ConsumerRejections;
}

export interface ConsoleState {
  generatedAt: string;
  instance: {
    id: string;
    uptimeSeconds: number;
    status: 'ok' | 'degraded' | 'unready' | 'unknown';
    sandbox: boolean;
    redis: 'ok' | 'down' | 'off';
  };
  /** Seconds covered by the rates and the recent windows. */
  windowSeconds: number;
  upstreams: UpstreamState[];
  consumers: ConsumerState[];
  /** Where consumers come from, and whether the console may change them (not when the file rules). */
  consumerSource: Pick<ConsumerSourceState, 'source' | 'writable' | 'lastError'>;
  /** The composite views in force, with their calls since start (complete, partial, failed, 304). */
  views: ViewStats[];
  /**
   * The most watched resources (`GET /watch`): subscribers are the streams' paths on every live replica
   * (`scope: 'fleet'`, through Redis) or on this one (`'replica'`: no Redis, or Redis away), polls the
   * fleet's fresh polls heard since a replica watches the resource.
   */
  watched: MostWatched;
  /** Which metric families were found: the page says "n/a" for the others. */
  metrics: Record<keyof typeof CONSOLE_METRICS, boolean>;
}

interface Sample {
  t: number;
  requests?: Map<string, number>;
  consumerRequests?: Map<string, number>;
  cache?: Map<string, CacheCounts>;
  upstreamStatus?: Map<string, Record<string, number>>;
}

type Values = Array<{ value: number; labels: Record<string, string | number | undefined> }>;

const MIN_SAMPLE_GAP_MS = 900;
const MAX_SAMPLES = 61;
/** Recent windows (hit ratio, status classes) span about this long. */
const RECENT_MS = 60_000;
const READINESS_TTL_MS = 1500;
/** Rows of the most-watched list. */
const MOST_WATCHED = 20;

/** Served from the cache (hit, stale, coalesced) over lookups that could be (those and misses). */
function ratioOf(c: CacheCounts): number | null {
  const served = c.hit + c.stale + c.coalesced;
  return served + c.miss > 0 ? round(served / (served + c.miss), 3) : null;
}

function sumBy(values: Values | undefined, label: string): Map<string, number> | undefined {
  if (!values) return undefined;
  const out = new Map<string, number>();
  for (const v of values) {
    const k = String(v.labels[label] ?? '');
    out.set(k, (out.get(k) ?? 0) + v.value);
  }
  return out;
}

function finite(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Builds the console's JSON state from what the gateway exposes: config, readiness facts (breaker,
 * cooldown, bucket), the metrics registry (requests, cache events, 429s, quota) and recent errors. Rates
 * come from samples taken when the console asks (at most about one a second): no timer and no work while
 * nobody looks. Numbers are this instance's; fleet-wide state (cooldown, budget via Redis) is shared.
 */
@Injectable()
export class ConsoleStateService {
  private readonly samples: Sample[] = [];
  private readiness?: { at: number; value: Promise<Awaited<ReturnType<ReadinessService['check']>>> };
  private readonly instanceId = `${hostname()}:${process.pid}`;

  constructor(
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    @Inject(CONSUMER_STORE) private readonly consumers: ConsumerStore,
    private readonly readinessService: ReadinessService,
    private readonly proxy: ProxyService,
    private readonly errors: RecentErrors,
    private readonly consumerRegistry: ConsumerRegistry,
    private readonly views: ViewsService,
    private readonly watch: WatchService,
  ) {}

  private async values(name: string): Promise<Values | undefined> {
    const metric = this.registry.getSingleMetric(name);
    if (!metric) return undefined;
    try {
      return (await metric.get()).values;
    } catch {
      return undefined;
    }
  }

  /** Readiness probes (a TCP connect per upstream), shared by every console viewer for a moment. */
  private readinessReport(): ReturnType<ReadinessService['check']> {
    const now = Date.now();
    if (!this.readiness || now - this.readiness.at > READINESS_TTL_MS)
      this.readiness = { at: now, value: this.readinessService.check() };
    return this.readiness.value;
  }

  private async sample(now: number): Promise<void> {
    const last = this.samples[this.samples.length - 1];
    if (last && now - last.t < MIN_SAMPLE_GAP_MS) return;
    const [requests, consumerRequests, cache, upstreamRequests] = await Promise.all([
      this.values(CONSOLE_METRICS.requests),
      this.values(CONSOLE_METRICS.consumerRequests),
      this.values(CONSOLE_METRICS.cacheEvents),
      this.values(CONSOLE_METRICS.upstreamRequests),
    ]);
    const s: Sample = {
      t: now,
      requests: sumBy(requests, 'upstream'),
      consumerRequests: sumBy(consumerRequests, 'consumer'),
    };
    if (cache) {
      s.cache = new Map();
      for (const v of cache) {
        const u = String(v.labels.upstream ?? '');
        const o = String(v.labels.outcome ?? '') as keyof CacheCounts;
        let c = s.cache.get(u);
        if (!c) s.cache.set(u, (c = { hit: 0, miss: 0, stale: 0, coalesced: 0, bypass: 0 }));
        if (o in c) c[o] += v.value;
      }
    }
    if (upstreamRequests) {
      s.upstreamStatus = new Map();
      for (const v of upstreamRequests) {
        const u = String(v.labels.upstream ?? '');
        const cls = String(v.labels.status_class ?? 'other');
        let c = s.upstreamStatus.get(u);
        if (!c) s.upstreamStatus.set(u, (c = {}));
        c[cls] = (c[cls] ?? 0) + v.value;
      }
    }
    this.samples.push(s);
    if (this.samples.length > MAX_SAMPLES) this.samples.shift();
  }

  /** Per-second rates of a per-key counter between consecutive samples, oldest first. */
  private history(pick: (s: Sample) => Map<string, number> | undefined, key: string): number[] {
    const out: number[] = [];
    for (let i = 1; i < this.samples.length; i++) {
      const a = pick(this.samples[i - 1]);
      const b = pick(this.samples[i]);
      if (!a || !b) continue;
      const dt = (this.samples[i].t - this.samples[i - 1].t) / 1000;
      out.push(round(Math.max(0, (b.get(key) ?? 0) - (a.get(key) ?? 0)) / dt));
    }
    return out;
  }

  /**
   * Requests per second over the recent window (the one the cache counts cover), not the last interval's:
   * one quiet interval made every upstream read the same.
   */
  private windowRate(
    pick: (s: Sample) => Map<string, number> | undefined,
    key: string,
    pair: [Sample, Sample] | undefined,
  ): number | null {
    if (!pair) return null;
    const b = pick(pair[1]);
    if (!b) return null;
    const a = pick(pair[0]);
    const seconds = (pair[1].t - pair[0].t) / 1000;
    if (pair[0] === pair[1] || !a || seconds <= 0) return 0;
    return round(Math.max(0, (b.get(key) ?? 0) - (a.get(key) ?? 0)) / seconds);
  }

  /** The oldest sample within the recent window, and the newest. */
  private recentPair(): [Sample, Sample] | undefined {
    const newest = this.samples[this.samples.length - 1];
    if (!newest) return undefined;
    const oldest = this.samples.find((s) => newest.t - s.t <= RECENT_MS) ?? newest;
    return [oldest, newest];
  }

  async state(): Promise<ConsoleState> {
    const now = Date.now();
    const [, report, rateLimited, tokens, configured, learned, cooldown, breaker, quota] = await Promise.all([
      this.sample(now),
      this.readinessReport().catch(() => undefined),
      this.values(CONSOLE_METRICS.rateLimited),
      this.values(CONSOLE_METRICS.budgetTokens),
      this.values(CONSOLE_METRICS.rateConfigured),
      this.values(CONSOLE_METRICS.rateLearned),
      this.values(CONSOLE_METRICS.cooldown),
      this.values(CONSOLE_METRICS.breaker),
      this.values(CONSOLE_METRICS.quotaRemaining),
    ]);
    const pair = this.recentPair();
    const windowSeconds = pair ? Math.round((pair[1].t - pair[0].t) / 1000) : 0;
    const gauge = (values: Values | undefined, upstream: string): number | null => {
      const v = values?.find((x) => x.labels.upstream === upstream);
      return v ? finite(v.value) : null;
    };
    const facts = new Map<string, UpstreamReadiness>((report?.upstreams ?? []).map((u) => [u.name, u]));

    const names = [...Object.keys(this.config.upstreams), ...this.proxy.all().map((u) => u.def.name)].filter(
      (n, i, all) => all.indexOf(n) === i,
    );
    const upstreams = names.map((name): UpstreamState => {
      const cfg = this.config.upstreams[name];
      const reg = this.proxy.upstream(name);
      const f = facts.get(name);
      const bucket = (f?.bucket ?? undefined) as Record<string, unknown> | undefined;
      const hist = this.history((s) => s.requests, name);

      let cacheCounts: CacheCounts | null = null;
      let hitRatio: number | null = null;
      let hitRatioSince: UpstreamState['hitRatioSince'] = null;
      if (pair && pair[1].cache) {
        const a = pair[0].cache?.get(name);
        const b = pair[1].cache.get(name);
        const d = { hit: 0, miss: 0, stale: 0, coalesced: 0, bypass: 0 };
        for (const k of CACHE_OUTCOMES)
          d[k] = Math.max(0, (b?.[k] ?? 0) - (pair[0] === pair[1] ? 0 : (a?.[k] ?? 0)));
        cacheCounts = d;
        // A quiet minute is no reason to say "n/a" beside answers served from the cache: the ratio since
        // start is shown then, and said to be.
        const recent = ratioOf(d);
        const total = b ? ratioOf(b) : null;
        hitRatio = recent ?? total;
        hitRatioSince = recent !== null ? 'recent' : total !== null ? 'start' : null;
      }
      let upstreamStatus: Record<string, number> | null = null;
      if (pair && pair[1].upstreamStatus) {
        const a = pair[0] === pair[1] ? undefined : pair[0].upstreamStatus?.get(name);
        const b = pair[1].upstreamStatus.get(name) ?? {};
        upstreamStatus = {};
        for (const [cls, n] of Object.entries(b)) upstreamStatus[cls] = Math.max(0, n - (a?.[cls] ?? 0));
      }
      const limited = rateLimited?.filter((v) => v.labels.upstream === name);
      const breakerFact = f?.breaker;
      const breakerGauge = gauge(breaker, name);

      return {
        name,
        title: reg?.def.title,
        registered: reg !== undefined,
        sandbox: cfg?.sandbox ?? false,
        reachable: f ? f.reachable : null,
        latencyMs: f?.latencyMs ?? null,
        requestsPerSec: this.windowRate((s) => s.requests, name, pair),
        history: hist,
        hitRatio,
        hitRatioSince,
        cache: cacheCounts,
        budget: {
          configuredRatePerSec:
            finite(bucket?.configuredRatePerSec) ?? gauge(configured, name) ?? cfg?.ratePerSec ?? 0,
          learnedRatePerSec: finite(bucket?.learnedRatePerSec) ?? gauge(learned, name),
          burst: finite(bucket?.burst) ?? cfg?.burst ?? 0,
          tokens: finite(bucket?.tokens) ?? gauge(tokens, name),
        },
        cooldownRemainingSeconds: finite(f?.cooldownRemainingSeconds) ?? gauge(cooldown, name),
        breaker:
          breakerFact === 'closed' || breakerFact === 'open' || breakerFact === 'half-open'
            ? breakerFact
            : breakerGauge !== null
              ? (BREAKER_OF_GAUGE[breakerGauge] ?? null)
              : null,
        rateLimited: limited
          ? {
              consumer: limited.filter((v) => v.labels.kind === 'consumer').reduce((n, v) => n + v.value, 0),
              upstream: limited.filter((v) => v.labels.kind === 'upstream').reduce((n, v) => n + v.value, 0),
            }
          : null,
        upstreamStatus,
        lastErrors: this.errors.upstream(name),
      };
    });

    const consumers = this.consumers.all().map((c): ConsumerState => {
      const hist = this.history((s) => s.consumerRequests, c.id);
      const view = consumerView(c, now);
      return {
        id: c.id,
        enabled: view.enabled,
        keys: view.keys,
        tokens: view.oidc ? { issuer: view.oidc.issuer, audience: view.oidc.audience } : null,
        upstreams: [...c.upstreams],
        write: c.write,
        weight: c.weight,
        requestsPerSec: this.windowRate((s) => s.consumerRequests, c.id, pair),
        history: hist,
        quota: c.limits.map((l) => {
          const v = quota?.find((x) => x.labels.consumer === c.id && x.labels.window === l.name);
          // The gauge reports a window whole again once it has reset (ConsumerQuota.remainingNow).
          const remaining = v ? finite(v.value) : null;
          return {
            window: l.name,
            ttlMs: l.ttlMs,
            limit: l.limit,
            remaining,
            used: remaining === null ? null : Math.max(0, l.limit - remaining),
          };
        }),
        rejections: this.errors.consumer(c.id),
      };
    });

    const redisCheck = report?.checks.redis as { ok?: boolean } | undefined;
    return {
      generatedAt: new Date(now).toISOString(),
      instance: {
        id: this.instanceId,
        uptimeSeconds: Math.round(process.uptime()),
        status: report ? report.status : 'unknown',
        sandbox: Object.values(this.config.upstreams).some((u) => u.sandbox),
        redis: this.config.redis ? (redisCheck?.ok ? 'ok' : 'down') : 'off',
      },
      windowSeconds,
      upstreams,
      consumers,
      consumerSource: (({ source, writable, lastError }) => ({ source, writable, lastError }))(
        this.consumerRegistry.state(),
      ),
      views: this.views.stats(),
      watched: await this.watch.mostWatched(MOST_WATCHED),
      metrics: Object.fromEntries(
        Object.entries(CONSOLE_METRICS).map(([k, name]) => [
          k,
          this.registry.getSingleMetric(name) !== undefined,
        ]),
      ) as Record<keyof typeof CONSOLE_METRICS, boolean>,
    };
  }
}
