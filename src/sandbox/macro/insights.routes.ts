// Fake CEIC insights: gallery, search, their series and downloads.
import type { FakeRouter } from '../fake-router.js';
import { type MacroEnv, type MacroHandler, bad, notFound, ok } from './macro-errors.js';
import { int, listParam, page } from '../fake-params.js';
import type { FakeReply, FakeRequest } from '../fake-upstream.js';
import { isoDateTime } from '../data/seeded.js';
import { INSIGHT_CATEGORIES, insights } from './insights.data.js';
import { insightJson, pointFilter, seriesMetadata } from './macro-views.js';
import { seriesInfo, type SeriesInfo, seriesTimePoints } from './series.data.js';

export function insightRoutes(r: FakeRouter<MacroHandler>, env: MacroEnv): void {
  const get = (p: string, h: MacroHandler) => r.add('GET', p, h);
  const byId = (id: string | undefined) => insights().find((i) => i.id === id);
  const seriesOf = (sid: string | undefined) => insights().find((i) => i.seriesIds.includes(sid ?? ''));
  const seriesItem = (sid: string, extra: (info: SeriesInfo) => Record<string, unknown>) => {
    const info = seriesInfo(sid);
    return { id: sid, name: info.name, ...extra(info) };
  };
  const seriesList = (
    req: FakeRequest,
    id: string | undefined,
    extra: (info: SeriesInfo) => Record<string, unknown>,
  ): FakeReply => {
    const ins = byId(id);
    if (!ins) return notFound(`Insight ${id}`);
    return ok({
      data: {
        total: ins.seriesIds.length,
        items: ins.seriesIds.map((s) => seriesItem(s, extra)),
        facets: [],
      },
    });
  };

  get('/insights', () => ok({ data: insights().map(insightJson) }));
  get('/insights/categories', () => ok({ data: INSIGHT_CATEGORIES }));
  get('/insights/categories/gallery', () =>
    ok({
      data: INSIGHT_CATEGORIES.map((c) => ({
        ...c,
        insights: insights()
          .filter((i) => i.categoryId === c.id)
          .map(insightJson),
      })),
    }),
  );
  get('/insights/search', ({ req }) => {
    const q = req.query;
    const limit = int(q.get('limit')) ?? 100;
    const offset = int(q.get('offset')) ?? 0;
    if (Number.isNaN(limit) || Number.isNaN(offset)) return bad('limit and offset must be integers');
    const keyword = (q.get('keyword') ?? '').toLowerCase();
    const cats = listParam(q, 'categories');
    const tags = listParam(q, 'tags');
    const found = insights().filter(
      (i) =>
        (keyword === '' || i.name.toLowerCase().includes(keyword)) &&
        (cats.length === 0 || cats.includes(i.categoryId)) &&
        (tags.length === 0 || tags.some((t) => i.tags.includes(t))),
    );
    // The vendor types `subscribed` as a string here.
    const items = page(found, offset, limit).map((i) => ({ ...insightJson(i), subscribed: 'true' }));
    return ok({ data: { total: found.length, items, facets: [] } });
  });
  get('/insights/series/:series_id', ({ params }) => {
    const sid = params.series_id ?? '';
    if (!seriesOf(sid)) return notFound(`Insight series ${sid}`);
    const info = seriesInfo(sid);
    return ok({
      data: [
        {
          entityId: sid,
          insightId: seriesOf(sid)?.id,
          metadata: seriesMetadata(info, seriesTimePoints(info)),
        },
      ],
    });
  });
  get('/insights/series/:series_id/data', ({ req, params }) => {
    const sid = params.series_id ?? '';
    if (!seriesOf(sid)) return notFound(`Insight series ${sid}`);
    const narrow = pointFilter(req.query);
    if (typeof narrow === 'string') return bad(narrow);
    return ok({ data: [{ entityId: sid, timePoints: narrow(seriesTimePoints(seriesInfo(sid))) }] });
  });
  get('/insights/series/:series_id/metadata', ({ params }) => {
    const sid = params.series_id ?? '';
    if (!seriesOf(sid)) return notFound(`Insight series ${sid}`);
    const info = seriesInfo(sid);
    return ok({ data: [{ entityId: sid, metadata: seriesMetadata(info, seriesTimePoints(info)) }] });
  });
  get('/insights/:id', ({ params }) => {
    const ins = byId(params.id);
    return ins ? ok({ data: [insightJson(ins)] }) : notFound(`Insight ${params.id}`);
  });
  get('/insights/:id/download/:file_format', ({ params }) => {
    const ins = byId(params.id);
    if (!ins) return notFound(`Insight ${params.id}`);
    const format = (params.file_format ?? '').toLowerCase();
    if (!['xlsx', 'csv', 'pdf', 'xls'].includes(format))
      return bad('file_format must be xlsx, xls, csv or pdf');
    const expires = env.now() + 3_600_000;
    return ok({
      data: {
        title: ins.name,
        format,
        downloadLink: `${env.url()}/downloads/insight-${ins.id}.${format}?expires=${expires}`,
        downloadLinkExpiration: isoDateTime(expires),
      },
    });
  });
  get('/insights/:id/series', ({ req, params }) => seriesList(req, params.id, () => ({})));
  get('/insights/:id/series/data', ({ req, params }) => {
    const narrow = pointFilter(req.query);
    if (typeof narrow === 'string') return bad(narrow);
    return seriesList(req, params.id, (info) => ({ timePoints: narrow(seriesTimePoints(info)) }));
  });
  get('/insights/:id/series/metadata', ({ req, params }) =>
    seriesList(req, params.id, (info) => ({ metadata: seriesMetadata(info, seriesTimePoints(info)) })),
  );
}
