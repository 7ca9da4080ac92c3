import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { releases } from '../../src/sandbox/macro/insights.data.js';
import type { RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { MACRO_ROUTES } from '../../src/upstreams/macro/macro.routes.js';
import { macroWatchSchedule } from '../../src/upstreams/macro/macro.watch-schedule.js';

const route = (id: string): RouteDefinition => MACRO_ROUTES.find((r) => r.id === id)!;

// Beside the unit tests of the hook (test/unit/watch-schedule.spec.ts): here it reads what the sandbox's fake
// vendor really answers, which needs the fake's server.
describe("the macro interface's calendar hook reads the sandbox fake's /releases/series/{id}", () => {
  const fake = new FakeMacroUpstream({ token: 'sbx_macro_schedule_unit_key_4a1c' });
  beforeAll(() => fake.start());
  afterAll(() => fake.close());

  it('one window per release of the series, its from/to read as UTC', async () => {
    const rel = releases()[3];
    const id = rel.seriesIds[0];
    const [path] = macroWatchSchedule.pathsOf(route('macro.series.data'), { id });
    expect(path).toBe(`/macro/releases/series/${id}`);
    const res = await fetch(
      `${fake.url}${path.slice('/macro'.length)}?token=sbx_macro_schedule_unit_key_4a1c`,
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
});
