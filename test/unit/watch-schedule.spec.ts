import type { WatchConfig } from '../../src/config/atrium-config.js';
import type { RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { MACRO_ROUTES } from '../../src/upstreams/macro/macro.routes.js';
import { macroWatchSchedule } from '../../src/upstreams/macro/macro.watch-schedule.js';
import { intervalAround, WatchSchedules } from '../../src/watch/watch-schedule.js';
import type { ViewDefinition } from '../../src/views/view-definition.js';
import type { WatchedPart, WatchTarget } from '../../src/watch/watch-target.js';
import { FakeClock } from '../helpers/fake-clock.js';

const MIN = 60_000;
const release = { intervalMs: 10_000, marginMs: 5 * MIN, quietMs: 60 * MIN };
const config = { minIntervalMs: 5_000, release } as WatchConfig;
const TTL = 5 * MIN;
const route = (id: string): RouteDefinition => MACRO_ROUTES.find((r) => r.id === id)!;
const seriesTarget = (id: string, routeId = 'macro.series.data'): WatchTarget => ({
  kind: 'route',
  key: `/macro/series/${id}/data`,
  route: route(routeId),
  upstream: 'macro',
  params: { id },
  query: [],
  intervalMs: TTL,
});
/** The vendor's answer of `/releases/series/{id}`, in the shape the sandbox fake gives it. */
const calendar = (id: string, ...windows: Array<[from: string, to: string]>) => ({
  data: [
    {
      entityId: id,
      releases: windows.map(([from, to], i) => ({
        code: `RL${i}`,
        releaseDate: from.slice(0, 10),
        from,
        to,
        releaseStatus: 'SCHEDULED',
      })),
    },
  ],
});

describe('intervalAround: polls by a release calendar', () => {
  const at = (iso: string) => Date.parse(`${iso}Z`);
  const cpi = [{ from: at('2026-01-01T09:00:00'), to: at('2026-01-01T10:00:00') }];
  const interval = (now: string, windows = cpi) => intervalAround(windows, at(now), TTL, release, 5_000);

  it('polls rarely well before a release: the quiet interval', () => {
    expect(interval('2026-01-01T06:00:00')).toBe(60 * MIN);
  });
  it('wakes when the release window (with its margin) opens, not a quiet interval later', () => {
    expect(interval('2026-01-01T08:30:00')).toBe(25 * MIN);
  });
  it('polls often from the margin before a release to the margin after it', () => {
    for (const now of ['2026-01-01T08:55:00', '2026-01-01T09:30:00', '2026-01-01T10:05:00'])
      expect(interval(now)).toBe(10_000);
  });
  it('after the last release it knows, and without a calendar, the route TTL', () => {
    expect(interval('2026-01-01T10:05:01')).toBe(TTL);
    expect(interval('2026-01-01T06:00:00', [])).toBe(TTL);
  });
  it('never under the poll floor', () => {
    expect(intervalAround(cpi, at('2026-01-01T09:30:00'), TTL, { ...release, intervalMs: 100 }, 5_000)).toBe(
      5_000,
    );
    expect(interval('2026-01-01T08:54:59')).toBe(5_000);
  });
});

describe('WatchSchedules: reads the calendar through the gateway, keeps it, re-reads it', () => {
  const clock = new FakeClock(Date.parse('2026-01-01T06:00:00Z'));
  const reads: string[] = [];
  let answer: unknown = calendar('42', ['2026-01-01T09:00:00', '2026-01-01T10:00:00']);
  const schedules = new WatchSchedules({
    clock,
    config,
    scheduleOf: (u) => (u === 'macro' ? macroWatchSchedule : undefined),
    read: (path) => {
      reads.push(path);
      return Promise.resolve(answer);
    },
  });

  it('times a series by its calendar, read once for the quiet interval', async () => {
    expect(await schedules.intervalMs(seriesTarget('42'))).toBe(60 * MIN);
    expect(reads).toEqual(['/macro/releases/series/42']);
    await clock.advance(30 * MIN); // 06:30: still the calendar read at 06:00
    expect(await schedules.intervalMs(seriesTarget('42'))).toBe(60 * MIN);
    expect(reads).toHaveLength(1);
    await clock.advance(120 * MIN); // 08:30: the quiet interval passed, read again; the window opens at 08:55
    expect(await schedules.intervalMs(seriesTarget('42'))).toBe(25 * MIN);
    expect(reads).toHaveLength(2);
    await clock.advance(25 * MIN); // 08:55
    expect(await schedules.intervalMs(seriesTarget('42'))).toBe(10_000);
    await clock.advance(30 * MIN); // 09:25
    expect(await schedules.intervalMs(seriesTarget('42'))).toBe(10_000);
    expect(reads).toHaveLength(2);
  });

  it('reads the calendar again once a release it lists has passed (the next one may be out)', async () => {
    const t = new FakeClock(Date.parse('2026-01-01T09:30:00Z'));
    const read: string[] = [];
    let body: unknown = calendar('42', ['2026-01-01T09:00:00', '2026-01-01T10:00:00']);
    const daily = new WatchSchedules({
      clock: t,
      config: { ...config, release: { ...release, quietMs: 24 * 60 * MIN } },
      scheduleOf: () => macroWatchSchedule,
      read: (path) => {
        read.push(path);
        return Promise.resolve(body);
      },
    });
    expect(await daily.intervalMs(seriesTarget('42'))).toBe(10_000);
    body = calendar('42', ['2026-01-02T09:00:00', '2026-01-02T10:00:00']);
    await t.advance(35 * MIN); // 10:05: the margin after the window
    expect(await daily.intervalMs(seriesTarget('42'))).toBe(10_000);
    expect(read).toHaveLength(1);
    await t.advance(1_000); // 10:05:01: the window and its margin are over
    expect(await daily.intervalMs(seriesTarget('42'))).toBe(Date.parse('2026-01-02T08:55:00Z') - t.now());
    expect(read).toHaveLength(2);
  });

  it('an unreadable calendar and a route with no releases keep the TTL', async () => {
    answer = undefined;
    expect(await schedules.intervalMs(seriesTarget('43'))).toBe(TTL);
    const feed: WatchTarget = { ...seriesTarget('7', 'macro.feeds.get'), key: '/macro/feeds/7' };
    expect(await schedules.intervalMs(feed)).toBe(TTL);
    expect(reads.slice(2)).toEqual(['/macro/releases/series/43']);
  });
});

describe("WatchSchedules: calendar reads wait with the upstream's polls", () => {
  it('reads no calendar while the upstream is deferred: what is known, or the TTL, times the polls', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T06:00:00Z'));
    const reads: string[] = [];
    let deferred = true;
    const schedules = new WatchSchedules({
      clock,
      config,
      scheduleOf: () => macroWatchSchedule,
      read: (path) => {
        reads.push(path);
        return Promise.resolve(calendar('42', ['2026-01-01T09:00:00', '2026-01-01T10:00:00']));
      },
      deferred: (upstream) => upstream === 'macro' && deferred,
    });
    // In a cooldown with nothing known: the TTL, and no read.
    expect(await schedules.intervalMs(seriesTarget('42'))).toBe(TTL);
    expect(reads).toEqual([]);
    // The cooldown over: the calendar is read and times the polls.
    deferred = false;
    expect(await schedules.intervalMs(seriesTarget('42'))).toBe(60 * MIN);
    expect(reads).toHaveLength(1);
    // Due for a re-read (08:30) in a new cooldown: the calendar known keeps timing, nothing is read.
    deferred = true;
    await clock.advance(150 * MIN);
    expect(await schedules.intervalMs(seriesTarget('42'))).toBe(25 * MIN);
    expect(reads).toHaveLength(1);
    deferred = false;
    expect(await schedules.intervalMs(seriesTarget('42'))).toBe(25 * MIN);
    expect(reads).toHaveLength(2);
  });
});

describe('WatchSchedules: series lists and views follow the calendars of the series they read', () => {
  // Series 42 releases 09:00–10:00, series 43 12:00–13:00, series 44 has no release ahead.
  const calendars: Record<string, unknown> = {
    '/macro/releases/series/42': calendar('42', ['2026-01-01T09:00:00', '2026-01-01T10:00:00']),
    '/macro/releases/series/43': calendar('43', ['2026-01-01T12:00:00', '2026-01-01T13:00:00']),
    '/macro/releases/series/44': calendar('44'),
  };
  const setUp = () => {
    const clock = new FakeClock(Date.parse('2026-01-01T06:00:00Z'));
    const reads: string[] = [];
    const schedules = new WatchSchedules({
      clock,
      config,
      scheduleOf: (u) => (u === 'macro' ? macroWatchSchedule : undefined),
      read: (path) => {
        reads.push(path);
        return Promise.resolve(calendars[path]);
      },
    });
    return { clock, reads, schedules };
  };
  const part = (name: string, routeId: string, id: string | undefined, intervalMs = TTL): WatchedPart => ({
    name,
    upstream: 'macro',
    route: route(routeId),
    ...(id !== undefined && { params: { id } }),
    intervalMs,
  });
  const viewTarget = (...parts: WatchedPart[]): WatchTarget => ({
    kind: 'view',
    key: '/views/v',
    view: { name: 'v' } as ViewDefinition,
    query: [],
    upstreams: ['macro'],
    parts,
    intervalMs: Math.min(...parts.map((p) => p.intervalMs)),
  });

  it('a series list polls often around a release of any of its series, rarely between', async () => {
    const { clock, reads, schedules } = setUp();
    const list = seriesTarget('42,43');
    expect(await schedules.timing(list)).toMatchObject({ intervalMs: 60 * MIN, noCache: false });
    expect(reads).toEqual(['/macro/releases/series/42', '/macro/releases/series/43']);
    await clock.advance(150 * MIN); // 08:30: 42's window opens (with its margin) at 08:55
    expect(await schedules.intervalMs(list)).toBe(25 * MIN);
    await clock.advance(30 * MIN); // 09:00: 42's release
    expect(await schedules.timing(list)).toMatchObject({ intervalMs: 10_000, noCache: true });
    await clock.advance(70 * MIN); // 10:10: 42 has no release ahead, so its TTL rules the list
    expect(await schedules.intervalMs(list)).toBe(TTL);
    expect(await schedules.intervalMs(seriesTarget('43'))).toBe(60 * MIN); // alone, 43 would wait
    await clock.advance(110 * MIN); // 12:00: 43's release
    expect(await schedules.intervalMs(list)).toBe(10_000);
  });

  it('a series with no release ahead in a list keeps the list at its TTL; a long list is not read', async () => {
    const { reads, schedules } = setUp();
    expect(await schedules.intervalMs(seriesTarget('43,44'))).toBe(TTL);
    const long = Array.from({ length: 21 }, (_, i) => String(100 + i)).join(',');
    expect(await schedules.intervalMs(seriesTarget(long))).toBe(TTL);
    expect(reads).toEqual(['/macro/releases/series/43', '/macro/releases/series/44']);
  });

  it('a view of one series (data, metadata, its calendar) is timed by that series, its parts asked fresh in the window', async () => {
    const { clock, reads, schedules } = setUp();
    const overview = viewTarget(
      part('data', 'macro.series.data', '42'),
      part('metadata', 'macro.series.metadata', '42'),
      part('releases', 'macro.releases.series', '42'),
    );
    const quiet = await schedules.timing(overview);
    expect(quiet.intervalMs).toBe(60 * MIN);
    expect([...quiet.noCacheParts]).toEqual([]);
    expect(reads).toEqual(['/macro/releases/series/42']); // one calendar for the three parts
    await clock.advance(175 * MIN); // 08:55
    const around = await schedules.timing(overview);
    expect(around).toMatchObject({ intervalMs: 10_000, noCache: true });
    expect([...around.noCacheParts]).toEqual(['data', 'metadata', 'releases']);
    await clock.advance(71 * MIN); // 10:06: past the window, nothing ahead: the TTL, set by the series' parts
    const after = await schedules.timing(overview);
    expect(after).toMatchObject({ intervalMs: TTL, noCache: true });
    // Polled at their TTL, each is asked of the vendor (a cached answer could hide a change an interval more).
    expect([...after.noCacheParts]).toEqual(['data', 'metadata', 'releases']);
  });

  it('a view of two series follows both; a part with no calendar keeps its TTL and is asked fresh only when it sets the pace', async () => {
    const { clock, schedules } = setUp();
    const feed = part('feed', 'macro.feeds.get', '7', 2 * MIN);
    const chained = part('chained', 'macro.series.data', undefined, 3 * MIN); // its id is another part's answer
    const pair = viewTarget(part('cpi', 'macro.series.data', '42'), part('gdp', 'macro.series.data', '43'));
    expect(await schedules.intervalMs(pair)).toBe(60 * MIN);
    await clock.advance(355 * MIN); // 11:55: the window of 43 opens
    const around = await schedules.timing(pair);
    expect(around.intervalMs).toBe(10_000);
    expect([...around.noCacheParts]).toEqual(['gdp']);

    // 42 has no release ahead (its TTL, 5 min): the feed's 2 min TTL is the shortest.
    const mixed = viewTarget(part('cpi', 'macro.series.data', '42'), feed, chained);
    const mixedTiming = await schedules.timing(mixed);
    expect(mixedTiming.intervalMs).toBe(2 * MIN);
    // The feed sets the pace at its TTL and is asked of the vendor; the others are cached longer.
    expect([...mixedTiming.noCacheParts]).toEqual(['feed']);
    const withGdp = await schedules.timing(viewTarget(part('gdp', 'macro.series.data', '43'), feed, chained));
    expect(withGdp.intervalMs).toBe(10_000);
    expect([...withGdp.noCacheParts]).toEqual(['gdp']);
    await clock.advance(71 * MIN); // 13:06: after 43's window and its margin, the parts' TTLs
    expect(
      await schedules.intervalMs(viewTarget(part('gdp', 'macro.series.data', '43'), feed, chained)),
    ).toBe(2 * MIN);
  });
});

describe("the macro interface's calendar hook", () => {
  it('a bare release date is that whole day; zoned times keep their zone; junk gives no window', () => {
    expect(
      macroWatchSchedule.windowsOf({
        data: [
          {
            releases: [
              { releaseDate: '2026-03-01' },
              { from: '2026-03-02T09:00:00+02:00', to: '2026-03-02T09:30:00+02:00' },
              { from: 'soon' },
              null,
            ],
          },
        ],
      }),
    ).toEqual([
      { from: Date.parse('2026-03-01T00:00:00Z'), to: Date.parse('2026-03-02T00:00:00Z') },
      { from: Date.parse('2026-03-02T07:00:00Z'), to: Date.parse('2026-03-02T07:30:00Z') },
    ]);
    expect(macroWatchSchedule.windowsOf({ errors: {} })).toEqual([]);
  });
});
