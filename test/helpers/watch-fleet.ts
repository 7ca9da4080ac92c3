// The watch fleet scenario, shared by its test (test/watch/watch-fleet.fleet.spec.ts: behaviour) and its
// bench (bench/watch-fleet.ts: the latency figures on a quiet machine). Only how a replica is started
// differs between them (the test's spawnGateway with its log capture, the bench's log file), so the caller
// passes that in; this module imports nothing test-only (no Jest), which lets the bench build it.
import { Redis } from 'ioredis';
import { request } from 'undici';
import { ScriptedVendor } from './scripted-vendor.js';
import { eventually } from './eventually.js';
import { SseClient, type SseEvent } from './sse.js';

/** One `node dist/main.js` replica as the caller started it. */
export interface FleetReplica {
  readonly url: string;
  /** SIGKILL, resolved once the process has exited. */
  kill(): Promise<void>;
  /** SIGTERM, resolved once the process has exited. */
  stop(): Promise<void>;
}

export interface WatchFleetOptions {
  /** SSE streams over the fleet (the figure: 1,000). */
  readonly subscribers: number;
  readonly redisUrl: string;
  /** The fleet's Redis key prefix (deleted on close). */
  readonly prefix: string;
  /** The key of a consumer allowed the macro interface, whom the replicas know. */
  readonly key: string;
  /**
   * Starts one replica serving the macro interface from `vendorUrl` to that consumer, with `env` added (the
   * fleet's Redis, the watch settings); it must not resolve before the replica listens.
   */
  startReplica(vendorUrl: string, env: Record<string, string>): Promise<FleetReplica>;
}

export const RESOURCES = 50;
export const REPLICAS = 3;
/** The series TTL, so the poll interval of every watched resource. */
export const INTERVAL_MS = 1000;
export const LEASE_MS = 2000;
/** The bound: a change reaches every subscriber within one poll interval and this. */
export const PUSH_SLACK_MS = 100;
/** The bound on a takeover after a lease holder dies. */
export const TAKEOVER_MS = 5000;
/** Streams opening at once. */
const OPENING = 50;

const enc = encodeURIComponent;
const seriesId = (r: number) => 7000 + r;
export const vendorPath = (r: number) => `/series/${seriesId(r)}/data`;
export const gatewayPath = (r: number) => `/macro${vendorPath(r)}`;
/** Each subscriber watches two of the resources; together they cover all of them. */
const watchedBy = (i: number): [number, number] => [i % RESOURCES, (i * 7 + 1) % RESOURCES];
const valueOf = (e: SseEvent) =>
  (e.json() as { body: { data: Array<{ value: number }> } }).body.data[0].value;
const pathOf = (e: SseEvent) => (e.json() as { path: string }).path;

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
const last = (sorted: readonly number[]) => sorted[sorted.length - 1];

/** A metric's value summed over its series whose line matches. */
async function metric(url: string, line: RegExp): Promise<number> {
  const res = await request(`${url}/metrics`);
  return (await res.body.text())
    .split('\n')
    .filter((l) => line.test(l))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}
const HELD = /^atrium_watch_resources\{role="held"\}/;
const PUSHES = /^atrium_watch_pushes_total /;
const CHANGED_POLLS = /^atrium_watch_polls_total\{outcome="changed"\}/;

export interface Subscriber {
  readonly client: SseClient;
  readonly replica: number;
  readonly resources: [number, number];
}

export interface PollFigures {
  /** Resources held per replica when the window opened, and once the fleet had settled after it. */
  holders: number[];
  settled: number[];
  windowMs: number;
  intervals: number;
  /** Vendor polls per resource in the window. */
  perResource: number[];
  total: number;
  perInterval: number;
}

export interface ChangeFigures {
  /** Answers carrying the change: one per subscriber and resource it watches. */
  answers: number;
  /** Per answer, ms from the change at the vendor to the stream, sorted. */
  delays: number[];
  /** Per answer, ms from the vendor's poll that first served the change to the stream, sorted. */
  fromPoll: number[];
  /** Per resource, ms between the poll that saw the change and the poll before it, sorted. */
  gaps: number[];
  /** Per resource, vendor polls from the change until the last subscriber had it. */
  pollsUntilAll: number[];
  untilAllMs: number;
  /** Fleet-wide growth of atrium_watch_pushes_total and of the polls that saw a change. */
  pushes: number;
  changedPolls: number;
  /** Answers within one poll interval (as the vendor saw the polls spaced) + 100 ms, and that bound. */
  withinBound: number;
  boundMs: number;
}

export interface TakeoverFigures {
  victim: number;
  /** Leases the victim held when killed. */
  victimHeld: number;
  /** ms from the kill until the survivors held every resource (their metrics). */
  takeoverMs: number;
  /** Per resource, ms from the kill to its first poll after the change made after it (absent: never). */
  resumedMs: Array<number | undefined>;
  survivors: number;
  answers: number;
  /** Per surviving answer, ms from the change made after the kill to the stream, sorted. */
  delays: number[];
}

/**
 * Three replicas sharing Redis, the scripted vendor on loopback counting every call, and `subscribers` SSE
 * streams spread round robin over the replicas, each watching two of 50 series. One replica polls each
 * resource for the fleet (a lease); a change is published to every replica, which pushes it to its streams.
 */
export class WatchFleet {
  readonly vendor = new ScriptedVendor();
  readonly replicas: Array<{ replica: FleetReplica; killed: boolean }> = [];
  readonly subs: Subscriber[] = [];
  /** ms until every stream was open with its first answers. */
  openedMs = 0;
  private redis?: Redis;
  private value = 1;

  constructor(readonly o: WatchFleetOptions) {}

  /** Starts the vendor and the replicas, opens every stream and waits for every first answer. */
  async start(): Promise<void> {
    const { o, vendor } = this;
    await vendor.start();
    for (let r = 0; r < RESOURCES; r++) vendor.set(vendorPath(r), this.value);
    this.redis = new Redis(o.redisUrl);
    const env = {
      REDIS_URL: o.redisUrl,
      ATRIUM_REDIS_PREFIX: o.prefix,
      UPSTREAM_MACRO_TOKEN: 'macro-watch-fleet-vendor-key',
      // The vendor budget is not what is measured here: room for the fleet's polls and the first reads.
      UPSTREAM_MACRO_RATE_PER_SEC: '1000',
      UPSTREAM_MACRO_BURST: '1000',
      ATRIUM_CACHE_TTL_OVERRIDES: `series=${INTERVAL_MS}ms`,
      ATRIUM_WATCH_MIN_INTERVAL_MS: '50',
      ATRIUM_WATCH_LEASE_MS: String(LEASE_MS),
      ATRIUM_WATCH_MAX_PATHS_PER_CONSUMER: '10000',
    };
    const started = await Promise.allSettled(
      Array.from({ length: REPLICAS }, () => o.startReplica(vendor.url, env)),
    );
    // Those that did start are stopped in close() even when another did not.
    for (const s of started)
      if (s.status === 'fulfilled') this.replicas.push({ replica: s.value, killed: false });
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    // Every replica listens on the changes channel before a stream opens.
    await eventually(
      async () => {
        const [, n] = (await this.redis!.pubsub('NUMSUB', `${o.prefix}watch:changes`)) as [string, number];
        return Number(n) >= REPLICAS;
      },
      { what: 'every replica subscribed to the changes' },
    );
    const t0 = Date.now();
    for (let i = 0; i < o.subscribers; i += OPENING) {
      const batch = Array.from({ length: Math.min(OPENING, o.subscribers - i) }, async (_, k) => {
        const n = i + k;
        const resources = watchedBy(n);
        const replica = n % REPLICAS;
        const query = resources.map((r) => `path=${enc(gatewayPath(r))}`).join('&');
        const client = await SseClient.open(`${this.replicas[replica].replica.url}/watch?${query}`, {
          authorization: `Bearer ${o.key}`,
        });
        if (client.status !== 200) throw new Error(`stream ${n} refused: ${client.status} ${client.text}`);
        this.subs.push({ client, replica, resources });
      });
      await Promise.all(batch);
    }
    await this.allReceive(this.subs, this.value, 'every first answer');
    this.openedMs = Date.now() - t0;
  }

  /** Streams, replicas (a killed one has exited already), Redis keys, the vendor. */
  async close(): Promise<void> {
    for (const s of this.subs) s.client.close();
    await Promise.all(this.replicas.filter((r) => !r.killed).map((r) => r.replica.stop()));
    if (this.redis) {
      const keys = await this.redis.keys(`${this.o.prefix}*`);
      if (keys.length) await this.redis.del(...keys);
      await this.redis.quit();
    }
    await this.vendor.close();
  }

  /** Resources held per replica (a killed one: 0). */
  heldBy(): Promise<number[]> {
    return Promise.all(
      this.replicas.map((r) => (r.killed ? Promise.resolve(0) : metric(r.replica.url, HELD))),
    );
  }

  private async fleetMetric(line: RegExp): Promise<number> {
    const each = await Promise.all(
      this.replicas.filter((r) => !r.killed).map((r) => metric(r.replica.url, line)),
    );
    return each.reduce((a, b) => a + b, 0);
  }

  /** Vendor polls of resource `r` arriving in [from, to). */
  polls(r: number, from: number, to: number): number {
    return (this.vendor.times.get(vendorPath(r)) ?? []).filter((t) => t >= from && t < to).length;
  }

  /** Waits until every subscriber in `among` has an answer with `value` for each of its resources. */
  private allReceive(among: Subscriber[], value: number, what: string): Promise<boolean> {
    return eventually(
      () => among.every((s) => s.resources.every((r) => this.answerOf(s, r, value) !== undefined)),
      { what, timeoutMs: 30_000, intervalMs: 50 },
    );
  }

  private answerOf(s: Subscriber, r: number, value: number): SseEvent | undefined {
    return s.client.events.find(
      (e) => e.event === 'answer' && pathOf(e) === gatewayPath(r) && valueOf(e) === value,
    );
  }

  /** Per subscriber and resource: ms from `since` to its first answer with `value`, sorted. */
  private delays(among: Subscriber[], value: number, since: (r: number) => number): number[] {
    return among
      .flatMap((s) => s.resources.map((r) => this.answerOf(s, r, value)!.at - since(r)))
      .sort((a, b) => a - b);
  }

  /**
   * The vendor's polls over a window of about `intervals` intervals (until one resource has been polled
   * that many times more), once every resource has a holder; then waits until each has exactly one.
   */
  async measurePolls(intervals = 8): Promise<PollFigures> {
    await eventually(async () => (await this.heldBy()).reduce((a, b) => a + b, 0) >= RESOURCES, {
      what: `${RESOURCES} held resources in the fleet`,
    });
    const holders = await this.heldBy();
    const t0 = Date.now();
    await eventually(() => this.polls(0, t0, Infinity) >= intervals, {
      what: `${intervals} polls of one resource`,
      timeoutMs: 30_000,
    });
    const t1 = Date.now();
    const perResource = Array.from({ length: RESOURCES }, (_, r) => this.polls(r, t0, t1));
    const total = perResource.reduce((a, b) => a + b, 0);
    // A holder whose renewal a busy event loop delayed past its lease learns at its next renewal that
    // another replica took it: the fleet settles on one holder per resource.
    const settled = await eventually(
      async () => {
        const h = await this.heldBy();
        return h.reduce((a, b) => a + b, 0) === RESOURCES ? h : undefined;
      },
      { what: `each of the ${RESOURCES} resources held by one replica`, timeoutMs: 10_000 },
    );
    const windowMs = t1 - t0;
    return {
      holders,
      settled,
      windowMs,
      intervals: windowMs / INTERVAL_MS,
      perResource,
      total,
      perInterval: total / (windowMs / INTERVAL_MS),
    };
  }

  /** Changes every resource at the vendor and waits until every subscriber has the new answer. */
  async change(): Promise<ChangeFigures> {
    const value = ++this.value;
    const [pushes0, changed0] = [await this.fleetMetric(PUSHES), await this.fleetMetric(CHANGED_POLLS)];
    const t0 = Date.now();
    for (let r = 0; r < RESOURCES; r++) this.vendor.set(vendorPath(r), value);
    await this.allReceive(this.subs, value, 'the change at every subscriber');
    const tAll = Date.now();
    // Every push has been counted once the streams have read them.
    const [pushes1, changed1] = [await this.fleetMetric(PUSHES), await this.fleetMetric(CHANGED_POLLS)];
    // Per resource, at the vendor: the poll that saw the change, and the gap since the poll before it (the
    // poll interval as the fleet spaced it: the TTL, plus the poll's round trip, plus the holder's tick).
    const seen = Array.from({ length: RESOURCES }, (_, r) => {
      const times = this.vendor.times.get(vendorPath(r)) ?? [];
      const k = times.findIndex((t) => t >= t0);
      return { at: times[k], gap: times[k] - times[k - 1] };
    });
    const delays = this.delays(this.subs, value, () => t0);
    const gaps = seen.map((p) => p.gap).sort((a, b) => a - b);
    const boundMs = last(gaps) + PUSH_SLACK_MS;
    return {
      answers: delays.length,
      delays,
      fromPoll: this.delays(this.subs, value, (r) => seen[r].at),
      gaps,
      pollsUntilAll: Array.from({ length: RESOURCES }, (_, r) => this.polls(r, t0, tAll + 1)),
      untilAllMs: tAll - t0,
      pushes: pushes1 - pushes0,
      changedPolls: changed1 - changed0,
      withinBound: delays.filter((d) => d <= boundMs).length,
      boundMs,
    };
  }

  /**
   * Kills (SIGKILL) the replica holding the most leases, changes every resource right after, while its
   * leases still stand, and waits until the survivors hold every resource and their subscribers have the
   * change.
   */
  async killHolder(): Promise<TakeoverFigures> {
    await eventually(async () => (await this.heldBy()).reduce((a, b) => a + b, 0) === RESOURCES, {
      what: `${RESOURCES} held resources in the fleet`,
    });
    const before = await this.heldBy();
    const victim = before.indexOf(Math.max(...before));
    const tKill = Date.now();
    await this.replicas[victim].replica.kill();
    this.replicas[victim].killed = true;
    const value = ++this.value;
    const tChange = Date.now();
    for (let r = 0; r < RESOURCES; r++) this.vendor.set(vendorPath(r), value);
    const survivors = this.subs.filter((s) => !this.replicas[s.replica].killed);
    const takeoverMs = await eventually(
      async () => {
        const h = await this.heldBy();
        return h.reduce((a, b) => a + b, 0) === RESOURCES ? Date.now() - tKill : 0;
      },
      { what: 'the survivors hold every resource', timeoutMs: 20_000 },
    );
    await this.allReceive(survivors, value, 'the change after the kill at every survivor');
    const delays = this.delays(survivors, value, () => tChange);
    const resumedMs = Array.from({ length: RESOURCES }, (_, r) => {
      const after = (this.vendor.times.get(vendorPath(r)) ?? []).find((t) => t > tChange);
      return after === undefined ? undefined : after - tKill;
    });
    return {
      victim,
      victimHeld: before[victim],
      takeoverMs,
      resumedMs,
      survivors: survivors.length,
      answers: delays.length,
      delays,
    };
  }

  /** The figures as one line each (CI logs, the bench's output). */
  describePolls(f: PollFigures): string {
    const n = this.o.subscribers;
    return (
      `${n} subscribers on ${REPLICAS} replicas watching ${RESOURCES} resources (streams open with their ` +
      `first answers in ${this.openedMs} ms); held per replica ${f.holders.join('/')}; ${f.total} vendor ` +
      `polls in ${f.windowMs} ms (${f.intervals.toFixed(1)} intervals of ${INTERVAL_MS} ms) = ` +
      `${f.perInterval.toFixed(1)} per interval (one per replica would be ${RESOURCES * REPLICAS}, one per ` +
      `subscriber ${n * 2}); per resource ${Math.min(...f.perResource)}–${Math.max(...f.perResource)}`
    );
  }

  describeChange(f: ChangeFigures): string {
    const d = f.delays;
    const p = f.fromPoll;
    return (
      `change of ${RESOURCES} resources reached ${this.subs.length} subscribers (${f.answers} answers, ` +
      `${f.pushes} pushes counted) after p50 ${percentile(d, 50)} ms, p99 ${percentile(d, 99)} ms, max ` +
      `${last(d)} ms; poll interval (TTL ${INTERVAL_MS} ms) as spaced at the vendor ${f.gaps[0]}–` +
      `${last(f.gaps)} ms; from the poll to the stream p50 ${percentile(p, 50)} ms, p99 ` +
      `${percentile(p, 99)} ms, max ${last(p)} ms; ${f.withinBound} of ${f.answers} answers within one ` +
      `poll interval + ${PUSH_SLACK_MS} ms (${f.boundMs} ms)`
    );
  }

  describeTakeover(f: TakeoverFigures): string {
    const resumed = f.resumedMs.filter((t): t is number => t !== undefined);
    return (
      `replica ${f.victim + 1} killed (SIGKILL) holding ${f.victimHeld} of ${RESOURCES} leases (lease ` +
      `${LEASE_MS} ms): survivors held all ${RESOURCES} after ${f.takeoverMs} ms (metrics), last resource ` +
      `polled again ${Math.max(...resumed)} ms after the kill; the change made after the kill reached ` +
      `${f.survivors} surviving subscribers (${f.answers} answers): p99 ${percentile(f.delays, 99)} ms, ` +
      `max ${last(f.delays)} ms`
    );
  }
}
