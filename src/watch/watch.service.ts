import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Writable } from 'node:stream';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import type { Consumer } from '../core/auth/consumer.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { GatewayExceptionFilter } from '../core/errors/gateway-exception.filter.js';
import { REDIS_CLIENT, type RedisClient } from '../core/ports/redis.port.js';
import { SYSTEM_CLOCK, type Clock, type ClockTimer } from '../core/time/clock.js';
import { RouteMatcher } from '../batch/route-matcher.js';
import { ProxyService } from '../proxy/proxy.service.js';
import { Heartbeats } from './heartbeats.js';
import { UpstreamLimitsService } from '../proxy/upstream-limits.service.js';
import { RouteCaller, type RouteCallerIdentity } from '../route-calls/route-caller.js';
import { UsageService } from '../usage/usage.service.js';
import { ViewsService } from '../views/views.service.js';
import { sseEvent, watchAnswer, type WatchAnswer } from './watch-answer.js';
import {
  LocalWatchFleet,
  RedisWatchFleet,
  type WatchChange,
  type WatchFleet,
  type WatchedRow,
} from './watch-fleet.js';
import { resolveTarget, type WatchTarget } from './watch-target.js';
import { WatchSchedules, type PollTiming } from './watch-schedule.js';
import { WatchMetrics, type PollOutcome } from './watch.metrics.js';

export const WATCH_CLOCK = Symbol('WatchClock');

/** Who polls: no consumer quota (polls exist to save it), every interface, the smallest budget share. */
export const POLLER_ID = 'watch';
/** The poller's share of a scarce upstream budget against interactive consumers (weight 1 by default). */
const POLLER_WEIGHT = 0.05;
/** After a failed first read, the first retry; each next one waits twice as long, up to the poll interval. */
export const FIRST_READ_RETRY_MS = 250;

/** One path of a stream, in the order the client asked for them (the event id lists their ETags so). */
interface StreamPath {
  readonly path: string;
  /** Undefined when the path was refused. */
  readonly resource?: Resource;
  /** The ETag this stream last sent for the path ('' before any). */
  sent: string;
}

interface Stream {
  readonly consumerId: string;
  readonly requestId: string;
  readonly out: Writable;
  readonly paths: StreamPath[];
  /** The paths this stream counts against its consumer's cap. */
  readonly reserved: number;
  closed: boolean;
  /**
   * While the client does not read (the stream's buffer is full): the positions of the paths with an answer
   * not written yet, in the order to write them. Only positions: the answer is the resource's current one
   * when the client reads again (one copy for every stream), so a stream behind holds no backlog.
   */
  behind?: Set<number>;
}

interface Resource {
  readonly target: WatchTarget;
  readonly entries: Set<StreamPath & { readonly stream: Stream }>;
  answer?: WatchAnswer;
  holder: boolean;
  /** The ETag of this replica's last poll (what it last published). */
  polled?: string;
  nextClaimAt: number;
  nextPollAt: number;
  /** The last poll was stale and the next one comes soon to read the refresh it started. */
  followingUp: boolean;
  /** Reads that failed in a row (a failed first read counts): how long the next retry waits. */
  failures: number;
  busy: boolean;
  /** Fresh polls heard (from whichever replica polled) since this replica watches it; the console shows them. */
  heard: number;
  /** When this replica last heard a new answer (epoch ms). */
  changedAt?: number;
}

/** A resource in the console's most-watched list. */
export interface WatchedResource {
  /** The canonical path (query included). */
  readonly resource: string;
  /** Paths of streams that watch it on every live replica (this one's alone without Redis). */
  readonly subscribers: number;
  /** Of those, the paths of streams on this replica. */
  readonly subscribersHere: number;
  /** Fresh polls of it by any replica since a replica watches it (every replica hears every fresh poll). */
  readonly polls: number;
  /** This replica holds its lease and polls it. */
  readonly polledHere: boolean;
  /** When a replica last heard its answer change (ISO time), or null. */
  readonly lastChange: string | null;
}

/** The console's most-watched list: fleet-wide through Redis, else (no Redis, or Redis away) this replica's. */
export interface MostWatched {
  readonly scope: 'fleet' | 'replica';
  readonly resources: WatchedResource[];
}

/**
 * How many of its most watched resources a replica reports to the fleet: the console shows 20, so the
 * fleet's top is exact unless a resource is outside a replica's top 200 there and inside the fleet's 20.
 */
const WATCHED_REPORTED = 200;

export interface OpenWatch {
  readonly consumer: Consumer;
  readonly paths: readonly string[];
  readonly lastEventId?: string;
  readonly requestId: string;
}

interface WatchedRowHere extends WatchedRow {
  readonly holder: boolean;
}

type Fetched =
  | { readonly ok: true; readonly answer: WatchAnswer; readonly stale: boolean }
  | {
      readonly ok: false;
      readonly status: number;
      readonly envelope: string;
      readonly retryAfterMs?: number;
    };

const codeOf = (envelope: string): string | undefined => {
  try {
    return (JSON.parse(envelope) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
};

/**
 * A first read that failed on the vendor's side (its error, a timeout, its rate limit, an open breaker): the
 * consumer was allowed to read the path, so the path stays watched and the polls retry it. A refusal of the
 * consumer (permission, validation, its own quota) is final.
 */
const worthRetrying = (f: Fetched): boolean =>
  !f.ok && (f.status >= 500 || (f.status === 429 && codeOf(f.envelope) === 'UPSTREAM_RATE_LIMITED'));

/**
 * Watches (README "Watching for changes"): streams of Server-Sent Events that send a path's current answer
 * and then each new one. Per resource (canonical path) one replica of the fleet polls, holding a lease in
 * Redis; its answer goes through the normal pipeline (cache, key custody, budget) and a change is published
 * to every replica, which sends it to its own streams. Without Redis the replica polls for itself. Hand-made:
 * no library does fleet-leased polling; the SSE framing is three lines (`event`, `id`, `data`).
 */
@Injectable()
export class WatchService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Watch');
  private readonly resources = new Map<string, Resource>();
  private readonly streams = new Set<Stream>();
  /** Paths each consumer watches on this replica (the fleet's count of this replica, renewed by the tick). */
  private readonly pathsByConsumer = new Map<string, number>();
  /** Streams past the caps' first check, waiting for the fleet's count. */
  private opening = 0;
  private nextReportAt = 0;
  private nextWatchedReportAt = 0;
  /** This replica's watched resources are in the fleet's list (so an empty list must be reported too). */
  private watchedReported = false;
  private readonly fleet: WatchFleet;
  private readonly replicaId = randomUUID();
  private matcher = new RouteMatcher([]);
  private poller?: Consumer;
  private tickTimer?: ClockTimer;
  private readonly heartbeats: Heartbeats<Stream>;
  private readonly tickMs: number;
  private polls = 0;
  private stopped = false;
  /** Release calendars: when an upstream declares one, they time the polls of its resources. */
  private readonly schedules: WatchSchedules;

  constructor(
    private readonly caller: RouteCaller,
    private readonly views: ViewsService,
    private readonly proxy: ProxyService,
    private readonly limits: UpstreamLimitsService,
    private readonly filter: GatewayExceptionFilter,
    private readonly metrics: WatchMetrics,
    private readonly usage: UsageService,
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    @Inject(REDIS_CLIENT) redis: RedisClient,
    @Inject(WATCH_CLOCK) private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    const deliver = (c: WatchChange): void => this.deliver(c);
    this.fleet = redis
      ? new RedisWatchFleet(redis, config.redisPrefix, this.replicaId, deliver, (what, e) =>
          this.logger.warn(`watch channel ${what}: ${e.message}`),
        )
      : new LocalWatchFleet(deliver);
    const w = config.watch;
    // A comment line: proxies see traffic, EventSource ignores it. Not behind a client that does not read:
    // it has bytes coming already.
    this.heartbeats = new Heartbeats(clock, w.heartbeatMs, (s) => {
      if (!s.behind) s.out.write(': keep-alive\n\n');
    });
    this.schedules = new WatchSchedules({
      clock,
      config: w,
      scheduleOf: (upstream) => this.proxy.upstream(upstream)?.def.watchSchedule,
      read: (path) => this.readAsPoller(path),
      deferred: (upstream) => this.deferMsOf([upstream], w.minIntervalMs) > 0,
    });
    // Leases are renewed at a third of their length; polls are due at their interval (at least the floor).
    this.tickMs = Math.max(10, Math.min(w.leaseMs / 3, w.minIntervalMs / 2, 1000));
    metrics.readFrom({
      streams: () => this.streams.size,
      resources: (role) => [...this.resources.values()].filter((r) => r.holder === (role === 'held')).length,
      bufferedBytes: () => {
        let n = 0;
        for (const s of this.streams) n += this.bufferedBytes(s);
        return n;
      },
    });
  }

  /** Upstream modules register in their onModuleInit; by bootstrap every route table is known. */
  onApplicationBootstrap(): void {
    const upstreams = this.proxy.all();
    this.matcher = new RouteMatcher(upstreams.map((u) => u.def));
    this.poller = {
      id: POLLER_ID,
      keyHashes: [],
      upstreams: new Set(upstreams.map((u) => u.def.name)),
      write: false,
      limits: [],
      weight: POLLER_WEIGHT,
      reservedShare: 0,
      corsOrigins: [],
    };
    this.schedule();
    this.heartbeats.start();
  }

  /** Ends every stream (clients reconnect to another replica) and gives up this replica's leases. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.tickTimer) this.clock.clearTimeout(this.tickTimer);
    this.heartbeats.stop();
    for (const s of [...this.streams]) this.close(s, true);
    // The console stops counting this replica now, not a lease later.
    if (this.watchedReported)
      await this.fleet.reportWatched([], this.config.watch.leaseMs).catch(() => undefined);
    await this.fleet.close();
  }

  // ---------------------------------------------------------------------------------------------
  // Streams

  /**
   * Checks the caps (before any byte of the stream: past them the client gets the usual envelope), then
   * opens the stream on `out`: refusals first, one `error` event per refused path, then each path's answer
   * (or only its ETag when `Last-Event-ID` shows the client has it). Returns a function to call when the
   * client goes away.
   */
  async open(w: OpenWatch, out: Writable): Promise<() => void> {
    const cap = this.config.watch;
    if (this.stopped)
      throw new GatewayError('WATCH_STREAMS_FULL', { message: 'This replica is shutting down.' });
    if (w.paths.length === 0)
      throw new GatewayError('VALIDATION_FAILED', {
        parameter: 'path',
        message: 'Name at least one path to watch: /watch?path=%2Fmacro%2Fseries%2F1%2Fdata (repeatable).',
      });
    if (this.streams.size + this.opening >= cap.maxStreams)
      throw new GatewayError('WATCH_STREAMS_FULL', {
        message: `This replica holds its most watch streams (${cap.maxStreams}); retry shortly.`,
        retryAfterSeconds: 5,
      });
    const consumer = w.consumer.id;
    const refuse = (watched: number): GatewayError =>
      new GatewayError('WATCH_LIMIT_REACHED', {
        message: `This consumer may watch ${cap.maxPathsPerConsumer} paths at once; it watches ${watched} and asked for ${w.paths.length} more.`,
      });
    const mine = this.pathsByConsumer.get(consumer) ?? 0;
    if (mine + w.paths.length > cap.maxPathsPerConsumer) throw refuse(mine);
    // Counted here first, so streams opening at once on this replica see each other.
    this.pathsByConsumer.set(consumer, mine + w.paths.length);
    this.opening++;
    let others: number | undefined;
    try {
      others = await this.fleet.reserve(
        consumer,
        mine + w.paths.length,
        cap.maxPathsPerConsumer,
        cap.leaseMs,
      );
    } catch {
      // Redis away: this replica's own count is the cap.
      others = undefined;
    } finally {
      this.opening--;
    }
    if (others !== undefined || this.stopped) {
      this.giveBack(consumer, w.paths.length);
      if (this.stopped)
        throw new GatewayError('WATCH_STREAMS_FULL', { message: 'This replica is shutting down.' });
      throw refuse(others! + (this.pathsByConsumer.get(consumer) ?? 0));
    }
    const stream: Stream = {
      consumerId: consumer,
      requestId: w.requestId,
      out,
      paths: [],
      reserved: w.paths.length,
      closed: false,
    };
    this.streams.add(stream);
    this.heartbeats.add(stream);
    out.write(`retry: 2000\n\n`);
    void this.start(stream, w).catch((e: unknown) => {
      this.logger.error(`errorId=${w.requestId} watch start failed: ${(e as Error).message}`);
      this.close(stream, true);
    });
    return () => this.close(stream, false);
  }

  /** A consumer's paths given back on this replica, and its count in the fleet set to what is left. */
  private giveBack(consumer: string, n: number): void {
    const left = (this.pathsByConsumer.get(consumer) ?? 0) - n;
    if (left > 0) this.pathsByConsumer.set(consumer, left);
    else this.pathsByConsumer.delete(consumer);
    this.fleet
      .report(new Map([[consumer, Math.max(0, left)]]), this.config.watch.leaseMs)
      .catch(() => undefined);
  }

  private async start(stream: Stream, w: OpenWatch): Promise<void> {
    const known = (w.lastEventId ?? '').split(',').map((t) => t.trim());
    // No Accept-Language: the poller reads the resource as every watcher shares it.
    const identity: RouteCallerIdentity = { consumer: w.consumer };
    // Every path is resolved and read as the consumer (quota, permission, validation, cache) before any event.
    const firsts = await Promise.all(
      w.paths.map(async (path, i): Promise<{ target?: WatchTarget; fetched: Fetched }> => {
        const requestId = `${w.requestId.slice(0, 120)}:${i}`;
        let target: WatchTarget;
        try {
          target = this.resolve(path);
        } catch (e) {
          return { fetched: this.refusal(e, requestId, path) };
        }
        return { target, fetched: await this.fetch(target, identity, requestId) };
      }),
    );
    if (stream.closed) return;
    // Refusals first: a path the consumer may not read is said so in the stream's first event. A failed
    // first read is said so too, with "retrying": the path stays watched and its answer follows.
    firsts.forEach(({ target, fetched }, i) => {
      if (fetched.ok) return;
      const retrying = target !== undefined && worthRetrying(fetched);
      stream.out.write(
        sseEvent(
          'error',
          `{"path":${JSON.stringify(w.paths[i])},${retrying ? '"retrying":true,' : ''}${fetched.envelope.slice(1)}`,
        ),
      );
    });
    firsts.forEach(({ target, fetched }, i) => {
      const path = w.paths[i];
      if (!target || (!fetched.ok && !worthRetrying(fetched))) {
        stream.paths.push({ path, sent: '' });
        return;
      }
      const resource = this.resourceOf(target, fetched.ok);
      // The consumer's read went through the cache: it is the answer here unless the fleet's is newer (a
      // stale read). Any difference is settled by the next poll, which every replica hears.
      if (fetched.ok && (!resource.answer || !fetched.stale)) resource.answer = fetched.answer;
      const entry = { path, resource, sent: '', stream };
      stream.paths.push(entry);
      resource.entries.add(entry);
    });
    let live = 0;
    stream.paths.forEach((p, i) => {
      if (!p.resource) return;
      live++;
      const answer = p.resource.answer;
      if (!answer) return;
      if (known[i] !== answer.etag) return this.push(stream, i);
      p.sent = answer.etag;
      stream.out.write(
        sseEvent(
          'unchanged',
          `{"path":${JSON.stringify(p.path)},"etag":${JSON.stringify(answer.etag)}}`,
          this.idOf(stream),
        ),
      );
    });
    // Nothing left to watch: the stream ends after its refusals.
    if (live === 0) this.close(stream, true);
  }

  /** The event id: the ETag of each path in the order asked ('' for a refused one); one path → its ETag. */
  private idOf(stream: Stream): string {
    return stream.paths.map((p) => p.sent).join(',');
  }

  /**
   * Sends path `i` its resource's current answer, unless the client has stopped reading: once the stream's
   * buffer is full (`write` answers false) the path is only marked, and when the client has read ('drain')
   * it gets the answer current then. A client behind gets the latest answer of each path, not every one
   * it missed (the event id names every path's ETag, so nothing is lost to it), and the replica holds no
   * backlog for it.
   */
  private push(s: Stream, i: number): void {
    if (s.closed) return;
    if (s.behind) {
      if (s.behind.delete(i)) this.metrics.coalesced();
      s.behind.add(i);
      return;
    }
    if (!this.write(s, i)) {
      s.behind = new Set();
      s.out.once('drain', () => this.drain(s));
    }
  }

  /** Writes path `i`'s current answer if the client does not have it; false when the buffer is full. */
  private write(s: Stream, i: number): boolean {
    const p = s.paths[i];
    const answer = p.resource?.answer;
    if (!answer || p.sent === answer.etag) return true;
    p.sent = answer.etag;
    return s.out.write(
      sseEvent('answer', `{"path":${JSON.stringify(p.path)},${answer.members}}`, this.idOf(s)),
    );
  }

  private drain(s: Stream): void {
    const behind = s.behind;
    s.behind = undefined;
    if (!behind || s.closed) return;
    // The first write that fills the buffer again starts a new wait; the rest stay marked behind it.
    for (const i of behind) this.push(s, i);
  }

  /** What this replica holds for a stream: the bytes in its buffers, not yet taken by the socket. */
  private bufferedBytes(s: Stream): number {
    const out = s.out as Writable & { readableLength?: number };
    return out.writableLength + (out.readableLength ?? 0);
  }

  private close(stream: Stream, end: boolean): void {
    if (stream.closed) return;
    stream.closed = true;
    stream.behind = undefined;
    this.streams.delete(stream);
    this.heartbeats.delete(stream);
    this.giveBack(stream.consumerId, stream.reserved);
    for (const p of stream.paths) {
      const r = p.resource;
      if (!r) continue;
      for (const e of r.entries) if (e.stream === stream) r.entries.delete(e);
      if (r.entries.size === 0) this.drop(r);
    }
    if (end) stream.out.end();
  }

  /** This replica's watched resources, most subscribers first. */
  private watchedHere(limit: number): WatchedRowHere[] {
    return [...this.resources.values()]
      .sort((a, b) => b.entries.size - a.entries.size || a.target.key.localeCompare(b.target.key))
      .slice(0, limit)
      .map((r) => ({
        resource: r.target.key,
        subscribers: r.entries.size,
        polls: r.heard,
        changedAt: r.changedAt ?? 0,
        holder: r.holder,
      }));
  }

  /**
   * The resources with the most subscribers, most first (the operator console): over the fleet, this
   * replica's counts with what the other live replicas last reported (a dead one's lapse after a lease).
   */
  async mostWatched(limit: number): Promise<MostWatched> {
    const here = this.watchedHere(this.fleet.shared ? WATCHED_REPORTED : limit);
    let elsewhere: readonly (readonly WatchedRow[])[] | undefined;
    if (this.fleet.shared) elsewhere = await this.fleet.watchedElsewhere().catch(() => undefined);
    const rows = new Map<
      string,
      { subscribers: number; here: number; polls: number; changedAt: number; holder: boolean }
    >();
    for (const r of here)
      rows.set(r.resource, {
        subscribers: r.subscribers,
        here: r.subscribers,
        polls: r.polls,
        changedAt: r.changedAt,
        holder: r.holder,
      });
    for (const replica of elsewhere ?? [])
      for (const r of replica) {
        const row = rows.get(r.resource);
        if (!row)
          rows.set(r.resource, {
            subscribers: r.subscribers,
            here: 0,
            polls: r.polls,
            changedAt: r.changedAt,
            holder: false,
          });
        else {
          row.subscribers += r.subscribers;
          row.polls = Math.max(row.polls, r.polls);
          row.changedAt = Math.max(row.changedAt, r.changedAt);
        }
      }
    const resources = [...rows]
      .sort(([ka, a], [kb, b]) => b.subscribers - a.subscribers || ka.localeCompare(kb))
      .slice(0, limit)
      .map(([resource, r]) => ({
        resource,
        subscribers: r.subscribers,
        subscribersHere: r.here,
        polls: r.polls,
        polledHere: r.holder,
        lastChange: r.changedAt === 0 ? null : new Date(r.changedAt).toISOString(),
      }));
    return { scope: elsewhere ? 'fleet' : 'replica', resources };
  }

  // ---------------------------------------------------------------------------------------------
  // Resources and polls

  private resolve(path: string): WatchTarget {
    return resolveTarget(path, {
      matcher: this.matcher,
      view: (name) => this.views.registry.get(name),
      upstreamOf: (route) => this.proxy.upstreamOf(route),
      ttlOverrides: this.config.cache.ttlOverrides,
      minIntervalMs: this.config.watch.minIntervalMs,
    });
  }

  /** `answered`: whether the first read gave an answer (if not, the first poll is a retry, and comes soon). */
  private resourceOf(target: WatchTarget, answered: boolean): Resource {
    let r = this.resources.get(target.key);
    if (!r) {
      const now = this.clock.now();
      r = {
        target,
        entries: new Set(),
        holder: false,
        nextClaimAt: now,
        nextPollAt: now + (answered ? target.intervalMs : this.retryWaitMs(target, 1)),
        followingUp: false,
        failures: answered ? 0 : 1,
        busy: false,
        heard: 0,
      };
      this.resources.set(target.key, r);
    }
    return r;
  }

  private drop(r: Resource): void {
    this.resources.delete(r.target.key);
    if (r.holder) {
      r.holder = false;
      this.fleet.release(r.target.key).catch(() => undefined);
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.tickTimer = this.clock.setTimeout(() => {
      // A tick that fails is logged and the next one still comes: an unhandled rejection would end the process.
      void this.tick()
        .catch((e: Error) => this.logger.error(`watch tick failed: ${e.message}`))
        .finally(() => this.schedule());
    }, this.tickMs);
  }

  /** Claims or renews leases that are due, and polls the resources this replica holds that are due. */
  private async tick(): Promise<void> {
    const now = this.clock.now();
    const work: Promise<void>[] = [];
    const lease = this.config.watch.leaseMs;
    if (now >= this.nextReportAt && this.pathsByConsumer.size > 0) {
      // This replica's counts in the fleet's caps lapse after a lease unless renewed.
      this.nextReportAt = now + lease / 3;
      work.push(this.fleet.report(new Map(this.pathsByConsumer), lease).catch(() => undefined));
    }
    if (
      this.fleet.shared &&
      now >= this.nextWatchedReportAt &&
      (this.resources.size > 0 || this.watchedReported)
    ) {
      // The console's fleet-wide list: renewed like the counts above, so a dead replica's rows lapse.
      this.nextWatchedReportAt = now + lease / 3;
      const rows = this.watchedHere(WATCHED_REPORTED);
      work.push(
        this.fleet
          .reportWatched(rows, lease)
          .then(() => {
            this.watchedReported = rows.length > 0;
          })
          .catch(() => undefined),
      );
    }
    for (const r of this.resources.values()) {
      if (r.busy) continue;
      if (now >= r.nextClaimAt || (r.holder && now >= r.nextPollAt)) {
        r.busy = true;
        work.push(this.step(r, now).finally(() => (r.busy = false)));
      }
    }
    await Promise.all(work);
  }

  private async step(r: Resource, now: number): Promise<void> {
    const lease = this.config.watch.leaseMs;
    if (now >= r.nextClaimAt) {
      r.nextClaimAt = now + lease / 3;
      // Who watches it here, for the usage the holder counts (renewed with the lease).
      this.fleet.noteWatchers(r.target.key, this.watchersHere(r), lease).catch(() => undefined);
      let holds: boolean;
      try {
        holds = await this.fleet.claim(r.target.key, lease);
      } catch {
        // Redis away: poll for ourselves rather than let every watcher go stale.
        holds = true;
      }
      if (holds && !r.holder) {
        // Taking over: the last holder's poll says when the next is due and which answer it published.
        const last = await this.fleet.lastPoll(r.target.key).catch(() => undefined);
        const interval = await this.schedules.intervalMs(r.target);
        // Without an answer here yet, the retries keep their own schedule.
        if (last) {
          r.polled = last.etag;
          if (r.answer) r.nextPollAt = Math.max(now, last.at + interval);
        } else
          r.nextPollAt =
            !r.answer || interval === r.target.intervalMs
              ? Math.min(r.nextPollAt, now + interval)
              : now + interval;
      }
      r.holder = holds;
      if (!this.resources.has(r.target.key) && holds) {
        // Dropped while claiming.
        r.holder = false;
        await this.fleet.release(r.target.key).catch(() => undefined);
        return;
      }
    }
    if (r.holder && this.clock.now() >= r.nextPollAt) await this.poll(r);
  }

  /** How long polls of a target must wait: an upstream cooldown, an open breaker, or a budget with no token. */
  private deferMs(target: WatchTarget): number {
    return this.deferMsOf(target.kind === 'route' ? [target.upstream] : target.upstreams, target.intervalMs);
  }

  private deferMsOf(upstreams: readonly string[], intervalMs: number): number {
    let wait = 0;
    for (const name of upstreams) {
      const limiter = this.limits.limiter(name);
      if (!limiter) continue;
      const refused = limiter.refuseNow();
      if (refused)
        wait = Math.max(wait, limiter.cooldownRemainingMs(), (refused.retryAfterSeconds ?? 1) * 1000);
      // Interactive requests first: a poll takes a token only when one is there without waiting.
      else if (limiter.tokensLeft() < 1) wait = Math.max(wait, Math.min(1000, intervalMs / 10));
    }
    return wait;
  }

  private async poll(r: Resource): Promise<void> {
    const now = this.clock.now();
    const defer = this.deferMs(r.target);
    if (defer > 0) {
      r.nextPollAt = now + defer;
      this.metrics.poll('deferred');
      return;
    }
    // The route's TTL, or what the upstream's release calendar says (often around a release, rarely between);
    // a view's, its parts'.
    const timing = await this.schedules.timing(r.target);
    const interval = timing.intervalMs;
    // A follow-up reads what the refresh a stale part started has stored: asking the vendor again for the
    // parts it has just answered would be a second call in one interval.
    const asked: PollTiming = r.followingUp ? { ...timing, noCache: false, noCacheParts: new Set() } : timing;
    const fetched = await this.fetch(
      r.target,
      { consumer: this.poller! },
      `watch-${this.replicaId.slice(0, 8)}-${++this.polls}`,
      asked,
    );
    const at = this.clock.now();
    await this.countPoll(r);
    let outcome: PollOutcome;
    if (!fetched.ok) {
      outcome = 'error';
      r.failures++;
      // Watchers still waiting for a first answer: retry sooner (backing off); otherwise at the interval.
      const wait = r.answer ? interval : this.retryWaitMs(r.target, r.failures);
      r.nextPollAt = at + Math.max(wait, fetched.retryAfterMs ?? 0);
    } else {
      r.failures = 0;
      // A stale answer started a refresh: read again soon to get it, at no extra vendor call. Once only: a
      // second stale answer means the refresh failed, and reading again would start another vendor call.
      const followUp = fetched.stale && !r.followingUp;
      r.followingUp = followUp;
      r.nextPollAt = at + (followUp ? Math.max(50, Math.min(interval / 10, 1000)) : interval);
      const etag = fetched.answer.etag;
      outcome = fetched.stale ? 'stale' : etag === r.polled ? 'unchanged' : 'changed';
      // Every fresh answer is published, changed or not (one message per resource and interval): a replica
      // whose streams got an older answer (a stale first read, a message lost in a Redis blip) catches up.
      if (!fetched.stale) {
        r.polled = etag;
        const change: WatchChange = { k: r.target.key, etag, members: fetched.answer.members };
        await this.fleet.publish(change).catch(() => this.deliver(change));
      }
      await this.fleet
        .recordPoll(r.target.key, { etag, at }, Math.max(interval * 3, this.config.watch.leaseMs * 3))
        .catch(() => undefined);
    }
    this.metrics.poll(outcome);
  }

  private watchersHere(r: Resource): string[] {
    return [...new Set([...r.entries].map((e) => e.stream.consumerId))];
  }

  /**
   * A poll made is counted in the usage once for each consumer who watches the resource on any replica
   * (`watchPolls`, under each upstream it reads), however many streams it watches it with.
   */
  private async countPoll(r: Resource): Promise<void> {
    const here = this.watchersHere(r);
    const fleet = await this.fleet.watchersOf(r.target.key, this.config.watch.leaseMs).catch(() => []);
    const upstreams = r.target.kind === 'route' ? [r.target.upstream] : r.target.upstreams;
    for (const consumer of new Set([...here, ...fleet]))
      for (const upstream of upstreams) this.usage.countWatchPoll(consumer, upstream);
  }

  /** The wait before retry number `failures` of a read that failed: doubling, never past the interval. */
  private retryWaitMs(target: WatchTarget, failures: number): number {
    return Math.min(target.intervalMs, FIRST_READ_RETRY_MS * 2 ** Math.min(failures - 1, 20));
  }

  /** A change heard (from any replica, this one included): sent to every stream that has not got it. */
  private deliver(c: WatchChange): void {
    const r = this.resources.get(c.k);
    if (!r) return;
    r.heard++;
    if (r.answer?.etag !== c.etag) {
      if (r.answer) r.changedAt = this.clock.now();
      r.answer = { etag: c.etag, members: c.members };
    }
    let n = 0;
    for (const e of r.entries) {
      if (e.sent === c.etag || e.stream.closed) continue;
      this.push(e.stream, e.stream.paths.indexOf(e));
      n++;
    }
    this.metrics.pushed(n);
  }

  /** The answer of a target as `identity` gets it, through the same pipeline as a direct call. */
  private async fetch(
    target: WatchTarget,
    identity: RouteCallerIdentity,
    requestId: string,
    timing?: PollTiming,
  ): Promise<Fetched> {
    // A poll due at the TTL or sooner asks the vendor (PollTiming.noCache); its answer refreshes the cache
    // for every caller. Of a view, only the parts that set its pace or are due for a release.
    const cacheControl = timing?.noCache ? 'no-cache' : undefined;
    if (target.kind === 'route') {
      const res = await this.caller.call(identity, {
        route: target.route,
        url: target.key,
        params: target.params,
        query: target.query,
        requestId,
        accept: 'application/json',
        ...(cacheControl && { cacheControl }),
      });
      if (res.status === 200)
        return {
          ok: true,
          answer: watchAnswer(res.body, res.headers['content-type']),
          stale: res.headers['x-cache'] === 'STALE',
        };
      const retryAfter = Number(res.headers['retry-after']);
      return {
        ok: false,
        status: res.status,
        envelope: res.body.toString('utf8'),
        ...(retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      };
    }
    try {
      const res = await this.views.run({
        name: target.view.name,
        query: target.query,
        caller: identity,
        requestId,
        ...(timing?.noCacheParts.size && { noCacheParts: timing.noCacheParts }),
      });
      if (res.status === 200 && res.etag) {
        const parts = (JSON.parse(res.body) as { parts?: Record<string, { cache?: string }> }).parts ?? {};
        return {
          ok: true,
          answer: watchAnswer(Buffer.from(res.body), 'application/json', res.etag),
          stale: Object.values(parts).some((p) => p.cache === 'STALE'),
        };
      }
      const retryAfter = Number(res.retryAfter);
      return {
        ok: false,
        status: res.status,
        envelope: res.body,
        ...(retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      };
    } catch (e) {
      return this.refusal(e, requestId, target.key);
    }
  }

  /** A gateway path's JSON answer as the poller reads it (a release calendar); undefined when not a 200. */
  private async readAsPoller(path: string): Promise<unknown> {
    const target = this.resolve(path);
    if (target.kind !== 'route') return undefined;
    const res = await this.caller.call(
      { consumer: this.poller! },
      {
        route: target.route,
        url: target.key,
        params: target.params,
        query: target.query,
        requestId: `watch-${this.replicaId.slice(0, 8)}-schedule-${++this.polls}`,
        accept: 'application/json',
      },
    );
    return res.status === 200 ? (JSON.parse(res.body.toString('utf8')) as unknown) : undefined;
  }

  /** A refusal made before anything ran (an unknown path, a view's bad parameter): the one envelope. */
  private refusal(e: unknown, requestId: string, path: string): Fetched {
    const a = this.filter.answerFor(e, { requestId, url: path, accept: 'application/json' });
    return { ok: false, status: a.status, envelope: a.body };
  }
}
