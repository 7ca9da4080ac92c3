import type { Clock } from '../core/time/clock.js';
import type { RouteDefinition } from '../proxy/pipeline.types.js';
import type { ReleaseWindow, WatchSchedule } from '../proxy/upstream-definition.js';
import type { WatchConfig } from '../config/atrium-config.js';
import type { WatchTarget } from './watch-target.js';

/**
 * The poll interval a release calendar gives at `now`: `release.intervalMs` within `marginMs` of a release
 * window; between releases `quietMs`, cut short to wake when the next window opens; with no release ahead
 * (or none known) the route's TTL, `ttlMs`. Never under `floorMs`.
 */
export function intervalAround(
  windows: readonly ReleaseWindow[],
  now: number,
  ttlMs: number,
  release: WatchConfig['release'],
  floorMs: number,
): number {
  const { intervalMs, marginMs, quietMs } = release;
  let next = Infinity;
  for (const w of windows) {
    const opens = w.from - marginMs;
    if (now >= opens && now <= w.to + marginMs) return Math.max(floorMs, intervalMs);
    if (opens > now) next = Math.min(next, opens);
  }
  if (next === Infinity) return Math.max(floorMs, ttlMs);
  return Math.max(floorMs, Math.min(quietMs, next - now));
}

/** When a watched resource is polled next, and what that poll asks of the vendor rather than the cache. */
export interface PollTiming {
  readonly intervalMs: number;
  /**
   * The poll asks the vendor, not the cache: the route, or some parts of a view, are polled at their TTL or
   * sooner. A cached answer would then be one a refresh stored after the last poll, still fresh for a few
   * milliseconds, and the change it hides would wait a whole interval more.
   */
  readonly noCache: boolean;
  /** Of a view, the parts asked so, by name. */
  readonly noCacheParts: ReadonlySet<string>;
}

interface Known {
  readonly windows: readonly ReleaseWindow[];
  readonly readAt: number;
}

export interface WatchSchedulesOptions {
  readonly clock: Clock;
  readonly config: WatchConfig;
  /** The upstream's calendar hook, if it declares one. */
  readonly scheduleOf: (upstream: string) => WatchSchedule | undefined;
  /** Reads a gateway path as the poller (the normal pipeline: cache, budget, key custody); undefined on failure. */
  readonly read: (path: string) => Promise<unknown>;
  /**
   * Whether the upstream's polls must wait now (a cooldown, an open breaker, a budget with no token to
   * spare): its calendars are then not read either, and what is known of them (or the TTL) times the polls.
   */
  readonly deferred?: (upstream: string) => boolean;
}

/**
 * The release calendars of watched resources, read through the gateway (so their reads are cached and
 * counted like the polls) by the replica that polls, kept `quietMs` (or until a window they list has
 * passed, when the next one may be published), and turned into each next poll interval.
 */
export class WatchSchedules {
  private readonly known = new Map<string, Known>();
  private prunedAt = 0;

  constructor(private readonly o: WatchSchedulesOptions) {}

  /** The interval until a target's next poll, from now. */
  async intervalMs(target: WatchTarget): Promise<number> {
    return (await this.timing(target)).intervalMs;
  }

  /**
   * The interval until a target's next poll, from now, and what that poll must ask of the vendor rather
   * than the cache (what is polled sooner than the cache keeps it). A route follows its calendars; a view
   * follows its parts': the shortest of its cached parts' intervals, each part timed by its calendars, or its
   * TTL when it has none (or its path reads another part's answer, unknown until the view runs).
   */
  async timing(target: WatchTarget): Promise<PollTiming> {
    const floor = this.o.config.minIntervalMs;
    if (target.kind === 'route') {
      const intervalMs = await this.intervalOf(
        target.upstream,
        target.route,
        target.params,
        target.intervalMs,
      );
      return { intervalMs, noCache: intervalMs <= target.intervalMs, noCacheParts: new Set() };
    }
    const own = new Map<string, { intervalMs: number; ttlMs: number }>();
    let intervalMs = Infinity;
    for (const part of target.parts) {
      const partMs = part.params
        ? await this.intervalOf(part.upstream, part.route, part.params, part.intervalMs)
        : part.intervalMs;
      own.set(part.name, { intervalMs: partMs, ttlMs: part.intervalMs });
      intervalMs = Math.min(intervalMs, partMs);
    }
    if (intervalMs === Infinity) intervalMs = target.intervalMs;
    intervalMs = Math.max(floor, intervalMs);
    // Asked of the vendor: the parts polled sooner than they are cached (a release), and those that set the
    // view's pace at their TTL; the others are read from the cache, which keeps them longer.
    const noCacheParts = new Set<string>();
    for (const [name, p] of own)
      if (p.intervalMs < p.ttlMs || (p.intervalMs <= intervalMs && p.intervalMs <= p.ttlMs))
        noCacheParts.add(name);
    return { intervalMs, noCache: noCacheParts.size > 0, noCacheParts };
  }

  /** A resource's interval by its calendars: the shortest any of them gives; `ttlMs` with none. */
  private async intervalOf(
    upstream: string,
    route: RouteDefinition,
    params: Readonly<Record<string, string>>,
    ttlMs: number,
  ): Promise<number> {
    const { config } = this.o;
    const paths = this.o.scheduleOf(upstream)?.pathsOf(route, params) ?? [];
    if (paths.length === 0) return ttlMs;
    const calendars = await Promise.all(paths.map((path) => this.windows(upstream, path)));
    const now = this.o.clock.now();
    return Math.min(
      ...calendars.map((windows) =>
        intervalAround(windows, now, ttlMs, config.release, config.minIntervalMs),
      ),
    );
  }

  private async windows(upstream: string, path: string): Promise<readonly ReleaseWindow[]> {
    const now = this.o.clock.now();
    const k = this.known.get(path);
    const margin = this.o.config.release.marginMs;
    const passed = k?.windows.some((w) => w.to + margin >= k.readAt && w.to + margin < now);
    if (k && now - k.readAt < this.o.config.release.quietMs && !passed) return k.windows;
    // Calendar reads are polls too: they wait with the upstream's polls, and the next timing asks again.
    if (this.o.deferred?.(upstream)) return k?.windows ?? [];
    const body = await this.o.read(path).catch(() => undefined);
    if (body === undefined) {
      // Unreadable (the vendor is away): the TTL rules until the next poll tries again.
      this.known.delete(path);
      return [];
    }
    const windows = this.o.scheduleOf(upstream)?.windowsOf(body) ?? [];
    this.known.set(path, { windows, readAt: now });
    this.prune(now);
    return windows;
  }

  /** Calendars past their keep would be read again anyway: forget them (resources no longer watched). */
  private prune(now: number): void {
    const keep = this.o.config.release.quietMs;
    if (now - this.prunedAt < keep) return;
    this.prunedAt = now;
    for (const [p, k] of this.known) if (now - k.readAt >= keep) this.known.delete(p);
  }
}
