// Fake CEIC data releases and the series they touch.
import type { FakeRouter } from '../fake-router.js';
import { type MacroEnv, type MacroHandler, bad, notFound, ok } from './macro-errors.js';
import { dateParam, int, listParam, page } from '../fake-params.js';
import { releases } from './insights.data.js';
import { seriesInfo } from './series.data.js';

export function releaseRoutes(r: FakeRouter<MacroHandler>, _env: MacroEnv): void {
  const get = (p: string, h: MacroHandler) => r.add('GET', p, h);
  const view = (rel: ReturnType<typeof releases>[number]) => {
    const { seriesIds: _ids, ...rest } = rel;
    return rest;
  };
  get('/releases', ({ req }) => {
    const q = req.query;
    const limit = int(q.get('limit')) ?? 100;
    const offset = int(q.get('offset')) ?? 0;
    const from = dateParam(q.get('release_date_from'));
    const to = dateParam(q.get('release_date_to'));
    if ([limit, offset, from, to].some((v) => Number.isNaN(v)))
      return bad('Invalid paging or date parameter');
    const statuses = listParam(q, 'release_status');
    const keyword = (q.get('keyword') ?? '').toLowerCase();
    const found = releases().filter(
      (rel) =>
        (from === undefined || Date.parse(rel.releaseDate) >= from) &&
        (to === undefined || Date.parse(rel.releaseDate) <= to) &&
        (statuses.length === 0 || statuses.includes(rel.releaseStatus)) &&
        (keyword === '' || rel.name.toLowerCase().includes(keyword)),
    );
    return ok({ data: { total: found.length, items: page(found, offset, limit).map(view), facets: [] } });
  });
  get('/releases/series/:id', ({ params }) => {
    const ids = (params.id ?? '').split(',');
    return ok({
      data: ids.map((id) => ({
        entityId: id,
        releases: releases()
          .filter((rel) => rel.seriesIds.includes(id))
          .map(view),
      })),
    });
  });
  get('/releases/:code/series', ({ params }) => {
    const rel = releases().find((x) => x.code === params.code);
    if (!rel) return notFound(`Release ${params.code}`);
    return ok({
      data: {
        total: rel.seriesIds.length,
        items: rel.seriesIds.map((id) => ({ id, name: seriesInfo(id).name, releaseDate: rel.releaseDate })),
      },
    });
  });
}
