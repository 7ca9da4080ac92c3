import { Inject, Injectable, Logger, Optional, type BeforeApplicationShutdown } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SharedRedis } from '../core/ports/redis.port.js';
import { Counter, Gauge, type Registry } from 'prom-client';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import type { Clock } from '../core/time/clock.js';
import { METRICS_REGISTRY } from '../core/ports/metrics.port.js';
import type { Stage } from '../proxy/pipeline.types.js';
import { REDIS_CLIENT } from '../core/ports/redis.port.js';
import { USAGE_CLOCK, type UsageStages } from './usage.tokens.js';
import type { UpstreamLimitStageOptions } from '../proxy/stages/upstream-limit.stage.js';
import { atriumRouteOf } from '../proxy/upstream-controller.factory.js';
import { dayOf, U_CACHE, U_COALESCED, U_QUOTA, U_REQUESTS, U_WATCH_POLLS } from './usage-counters.js';
import { summarise, summaryRange, type UsageSummary } from './usage-summary.js';
import { UsageRecorder, type UsageQuery, type UsageReport } from './usage-recorder.js';
import { MemoryUsageStore, RedisUsageStore, type UsageStore } from './usage-store.js';
import { PgUsageStore } from './pg-usage.store.js';
import {
  DATABASE_POOL,
  DATABASE_READY,
  type DatabasePool,
  type DatabaseReady,
} from '../database/database.module.js';
import { shieldUsage, vendorUsageStage } from './vendor-usage.stage.js';

const FLUSH_EVERY_MS = 1000;

/**
 * Vendor usage per consumer, upstream and day (README "Vendor usage"): one response hook for requests,
 * cache answers, coalesced answers and quota refusals; a pipeline stage for vendor calls and errors; the
 * limiter's refusals for the shield. Off (`ATRIUM_USAGE=off`) → no hook, no stage, no counters.
 */
@Injectable()
export class UsageService implements BeforeApplicationShutdown, UsageStages {
  private readonly logger = new Logger('Usage');
  readonly enabled: boolean;
  private readonly recorder?: UsageRecorder;
  private flushFailing = false;

  constructor(
    @Inject(ATRIUM_CONFIG) config: AtriumConfig,
    @Inject(REDIS_CLIENT) redis: SharedRedis | null,
    @Inject(METRICS_REGISTRY) registry: Registry,
    @Inject(USAGE_CLOCK) clock: Clock,
    @Optional() @Inject(DATABASE_POOL) pool: DatabasePool = null,
    @Optional() @Inject(DATABASE_READY) ready?: DatabaseReady,
  ) {
    this.enabled = config.usageCounting;
    if (!this.enabled) return;
    let store: UsageStore;
    // Exported with or without a database (0 without), so dashboards and alerts find them everywhere.
    const dropped = new Counter({
      name: 'atrium_usage_rows_dropped_total',
      help: 'Usage rows dropped because the buffer kept while the database was away was full.',
      registers: [registry],
    });
    let buffered: () => number = () => 0;
    new Gauge({
      name: 'atrium_usage_rows_buffered',
      help: 'Usage rows waiting for the database.',
      registers: [registry],
      collect() {
        this.set(buffered());
      },
    });
    if (pool && config.database) {
      const pg = new PgUsageStore({
        pool,
        ready,
        maxBufferedRows: config.database.usageBufferRows,
        onDropped: (rows) => {
          dropped.inc(rows);
          this.logger.error(
            `usage buffer full (ATRIUM_USAGE_BUFFER_ROWS=${config.database!.usageBufferRows}): ` +
              `${rows} row(s) dropped, ${pg.droppedRows} since start`,
          );
        },
      });
      buffered = () => pg.bufferedRows;
      store = pg;
    } else store = redis ? new RedisUsageStore(redis, config.redisPrefix) : new MemoryUsageStore();
    this.recorder = new UsageRecorder({
      store,
      clock,
      registry,
      flushEveryMs: store.kind === 'memory' ? 0 : FLUSH_EVERY_MS,
      onFlushError: (err) => {
        // One line per outage, not one a second.
        if (!this.flushFailing)
          this.logger.warn(`usage counts not stored (kept for the next try): ${(err as Error).message}`);
        this.flushFailing = true;
      },
    });
  }

  /** Whether requests are counted (configureApp calls `count` from the request observer's hook then). */
  get counting(): boolean {
    return this.recorder !== undefined;
  }

  /** Counts one answered proxy request of a consumer (also called for in-process route calls). */
  count(req: FastifyRequest, reply: Pick<FastifyReply, 'statusCode' | 'getHeader'>): void {
    const consumer = req.consumer;
    const atrium = atriumRouteOf(req);
    if (consumer === undefined || atrium === undefined) return;
    const cache = reply.getHeader('x-cache');
    this.countCall(consumer.id, atrium.upstream, {
      status: reply.statusCode,
      cache: typeof cache === 'string' ? cache : undefined,
      errorCode: req.errorCode,
    });
  }

  /** One answered request of a consumer to an upstream's route (a client's request, or a batch item, a view part). */
  countCall(
    consumer: string,
    upstream: string,
    answer: { readonly status: number; readonly cache?: string; readonly errorCode?: string },
  ): void {
    const recorder = this.recorder;
    if (recorder === undefined) return;
    const cell = recorder.cell(consumer, upstream);
    recorder.add(cell, U_REQUESTS);
    const cache = answer.cache;
    if (cache === 'HIT' || cache === 'STALE') recorder.add(cell, U_CACHE);
    else if (cache === 'COALESCED') recorder.add(cell, U_COALESCED);
    else if (answer.status === 429 && answer.errorCode === 'CONSUMER_RATE_LIMITED')
      recorder.add(cell, U_QUOTA);
  }

  /**
   * One poll of a watched resource, counted for a consumer who watches it (the poll's vendor calls are
   * the poller's own, under the consumer `watch`).
   */
  countWatchPoll(consumer: string, upstream: string): void {
    this.recorder?.count(consumer, upstream, U_WATCH_POLLS);
  }

  /** The vendor-call counting stage of an upstream's pipeline (undefined when counting is off). */
  vendorStage(upstream: string): Stage | undefined {
    return this.recorder ? vendorUsageStage(this.recorder, upstream) : undefined;
  }

  /** The limit stage's options with shield refusals counted (unchanged when counting is off). */
  limitOptions(limit: UpstreamLimitStageOptions, upstream: string): UpstreamLimitStageOptions {
    return this.recorder ? shieldUsage(limit, this.recorder, upstream) : limit;
  }

  /** The console's table: per consumer and upstream, today and the last 7 days (null when off or unreadable). */
  async summary(now = Date.now()): Promise<UsageSummary | null> {
    if (!this.recorder) return null;
    try {
      return summarise(await this.report(summaryRange(now)), dayOf(now));
    } catch {
      return null;
    }
  }

  async report(q: UsageQuery): Promise<UsageReport> {
    if (!this.recorder) throw new Error('usage counting is off');
    const r = await this.recorder.report(q);
    this.flushFailing = false;
    return r;
  }

  /** Before Redis closes (onApplicationShutdown): the last second's counts still reach it. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.recorder?.close();
  }
}
