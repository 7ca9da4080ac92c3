import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { releases } from '../../src/sandbox/macro/insights.data.js';
import type { WatchConfig } from '../../src/config/atrium-config.js';
import type { RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { MACRO_ROUTES } from '../../src/upstreams/macro/macro.routes.js';
import { macroWatchSchedule } from '../../src/upstreams/macro/macro.watch-schedule.js';
import { intervalAround, WatchSchedules } from '../../src/watch/watch-schedule.js';
import type { WatchTarget } from '../../src/watch/watch-target.js';
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

  it('an unreadable calendar, a series list and a route with no releases keep the TTL', async () => {
    answer = undefined;
    expect(await schedules.intervalMs(seriesTarget('43'))).toBe(TTL);
    expect(await schedules.intervalMs(seriesTarget('1,2'))).toBe(TTL);
    const feed: WatchTarget = { ...seriesTarget('7', 'macro.feeds.get'), key: '/macro/feeds/7' };
    expect(await schedules.intervalMs(feed)).toBe(TTL);
    expect(reads.slice(2)).toEqual(['/macro/releases/series/43']);
  });
});

describe("the macro interface's calendar hook reads the sandbox fake's /releases/series/{id}", () => {
  const fake = new FakeMacroUpstream({ token: 'sbx_macro_schedule_unit_key_4a1c' });
  beforeAll(() => fake.start());
  afterAll(() => fake.close());

  it('one window per release of the series, its from/to read as UTC', async () => {
    const rel = releases()[3];
    const id = rel.seriesIds[0];
    const path = macroWatchSchedule.pathOf(route('macro.series.data'), { id });
    expect(path).toBe(`/macro/releases/series/${id}`);
    const res = await fetch(
      `${fake.url}${path!.slice('/macro'.length)}?token=sbx_macro_schedule_unit_key_4a1c`,
    );
    expect(res.status).toBe(200);
    const windows = macroWatchSchedule.windowsOf(await res.json());
    const expected = releases()
      .filter((r) => r.seriesIds.includes(id))
      .map((r) => ({ from: Date.parse(`${r.from}Z`), to: Date.parse(`${r.to}Z`) }));
    expect(expected.length).toBeGreaterThan(0);
    expect(windows).toEqual(expected);
    expect(windows).toContainEqual({ from: Date.parse(`${rel.from}Z`), to: Date.parse(`${rel.to}Z`) });
  });

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
