// Fake CEIC series: search, data, metadata, statistics, continuous chains and the chart image.
import type { FakeRouter } from '../fake-router.js';
import { type MacroEnv, type MacroHandler, bad, macroError, notFound, ok } from './macro-errors.js';
import type { FakeReply } from '../fake-upstream.js';
import { pointFilter, searchSeries, seriesLayout, seriesMetadata } from './macro-views.js';
import { seriesInfo, type SeriesInfo, seriesTimePoints, type TimePoint } from './series.data.js';

// 1×1 PNG, the answer of /series/{id}/visual.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

export function seriesRoutes(r: FakeRouter<MacroHandler>, _env: MacroEnv): void {
  const get = (p: string, h: MacroHandler) => r.add('GET', p, h);
  /** Multi-id answer: subscribed ids in `data`, unsubscribed ones as UNSUBSCRIBED_SERIES in `errors`. */
  const multi = (raw: string | undefined, build: (info: SeriesInfo) => unknown): FakeReply => {
    const ids = (raw ?? '').split(',').map((s) => s.trim());
    if (ids.some((id) => !/^\d+$/.test(id))) return macroError(400, 'INVALID_SERIES_ID', 'Invalid series id');
    const infos = ids.map(seriesInfo);
    const data = infos.filter((i) => i.subscribed).map(build);
    const errors = infos
      .filter((i) => !i.subscribed)
      .map((i) => ({ code: 'UNSUBSCRIBED_SERIES', message: `series ${i.id} is not subscribed` }));
    return ok(errors.length > 0 ? { data, errors } : { data });
  };
  /** Builds per-series items with narrowed time points, or a 400 when the narrowing parameters are bad. */
  const withPoints = (
    q: URLSearchParams,
    raw: string | undefined,
    build: (info: SeriesInfo, points: TimePoint[]) => unknown,
  ): FakeReply => {
    const narrow = pointFilter(q);
    if (typeof narrow === 'string') return bad(narrow);
    return multi(raw, (info) => build(info, narrow(seriesTimePoints(info))));
  };

  get('/series/search', ({ req }) => {
    const result = searchSeries(req.query);
    return typeof result === 'string' ? bad(result) : ok({ data: result });
  });
  get('/series/:id', ({ req, params }) =>
    withPoints(req.query, params.id, (info, timePoints) => ({
      entityId: info.id,
      subscribed: true,
      metadata: seriesMetadata(info, seriesTimePoints(info)),
      layout: seriesLayout(info),
      timePoints,
    })),
  );
  get('/series/:id/data', ({ req, params }) =>
    withPoints(req.query, params.id, (info, timePoints) => ({
      entityId: info.id,
      timePoints,
      deletedTimePoints: [],
    })),
  );
  get('/series/:id/metadata', ({ params }) =>
    multi(params.id, (info) => ({
      entityId: info.id,
      subscribed: true,
      metadata: seriesMetadata(info, seriesTimePoints(info)),
      layout: seriesLayout(info),
    })),
  );
  get('/series/:id/statistics', ({ params }) =>
    multi(params.id, (info) => {
      const values = seriesTimePoints(info).map((p) => p.value);
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      return {
        entityId: info.id,
        statistics: {
          count: values.length,
          min: Math.min(...values),
          max: Math.max(...values),
          mean: Math.round(mean * 100) / 100,
          first: values[0],
          last: values[values.length - 1],
        },
      };
    }),
  );
  get('/series/:id/continuous', ({ params }) =>
    multi(params.id, (info) => ({
      entityId: info.id,
      chains: [1, 2].map((n) => ({
        id: `${info.id}-C${n}`,
        name: `${info.name} (chain ${n})`,
        seriesCount: n + 1,
      })),
    })),
  );
  get('/series/:id/continuous/:chain_id/data', ({ req, params }) => {
    const chain = params.chain_id ?? '';
    if (!new RegExp(`^${params.id ?? ''}-C[12]$`).test(chain)) return notFound(`Chain ${chain}`);
    return withPoints(req.query, params.id, (info, timePoints) => ({
      entityId: info.id,
      chainId: chain,
      timePoints,
    }));
  });
  get('/series/:id/visual', ({ params }) => {
    const id = (params.id ?? '').split(',')[0] ?? '';
    if (!/^\d+$/.test(id)) return macroError(400, 'INVALID_SERIES_ID', 'Invalid series id');
    return { status: 200, headers: { 'content-type': 'image/png' }, text: PNG };
  });
}
