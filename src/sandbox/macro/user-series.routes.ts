// Fake CEIC user-defined series: create, clone, edit and their time points (per-instance state).
import type { FakeRouter } from '../fake-router.js';
import { type MacroEnv, type MacroHandler, bad, notFound, ok } from './macro-errors.js';
import { dateParam, type Fields, int, listParam, page, readFields, str } from '../fake-params.js';
import type { FakeReply, FakeRequest } from '../fake-upstream.js';
import { isoDate, isoDateTime } from '../data/seeded.js';
import type { UserSeries } from './macro-state.js';
import { seriesInfo, seriesTimePoints } from './series.data.js';

export function userSeriesRoutes(r: FakeRouter<MacroHandler>, env: MacroEnv): void {
  const view = (s: UserSeries) => ({
    id: s.id,
    name: s.name,
    description: s.description,
    frequency: s.frequency,
    unit: s.unit,
    created_at: s.created_at,
    updated_at: s.updated_at,
    ...(s.clonedFrom ? { clonedFrom: s.clonedFrom } : {}),
    numberOfObservations: s.timePoints.size,
  });
  const points = (s: UserSeries) =>
    [...s.timePoints].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, value]) => ({ date, value }));
  const find = (id: string | undefined): UserSeries | undefined => env.state.userSeries.get(id ?? '');
  const parsePoints = (fields: Fields): { date: string; value: number }[] | string => {
    let raw: unknown = fields.timepoints ?? fields.timePoints ?? fields.items;
    if (typeof raw === 'string') {
      try {
        raw = JSON.parse(raw);
      } catch {
        return 'timepoints must be a JSON list';
      }
    }
    if (raw === undefined && fields.date !== undefined) raw = [{ date: fields.date, value: fields.value }];
    if (!Array.isArray(raw) || raw.length === 0) return 'timepoints are required';
    const out: { date: string; value: number }[] = [];
    for (const p of raw as unknown[]) {
      const rec = (typeof p === 'object' && p !== null ? p : {}) as Record<string, unknown>;
      const date = str(rec.date);
      const value = Number(rec.value);
      if (date === undefined || Number.isNaN(dateParam(date)) || !Number.isFinite(value)) {
        return 'each time point needs a date and a numeric value';
      }
      out.push({ date: isoDate(dateParam(date) ?? 0), value });
    }
    return out;
  };
  const withFields = (req: FakeRequest, f: (fields: Fields) => FakeReply): FakeReply => {
    const parsed = readFields(req);
    return 'error' in parsed ? bad(parsed.error) : f(parsed.fields);
  };
  const now = () => isoDateTime(env.now());

  r.add('GET', '/userdefined/series', ({ req }) => {
    const limit = int(req.query.get('limit')) ?? 100;
    const offset = int(req.query.get('offset')) ?? 0;
    if (Number.isNaN(limit) || Number.isNaN(offset)) return bad('limit and offset must be integers');
    const all = [...env.state.userSeries.values()];
    return ok({ data: { total: all.length, items: page(all, offset, limit).map(view) } });
  });
  r.add('POST', '/userdefined/series', ({ req }) =>
    withFields(req, (fields) => {
      const name = str(fields.name);
      if (!name) return bad('name is required');
      const s: UserSeries = {
        id: env.state.nextId('UD'),
        name,
        description: str(fields.description) ?? '',
        frequency: str(fields.frequency) ?? 'M',
        unit: str(fields.unit) ?? '',
        created_at: now(),
        updated_at: now(),
        timePoints: new Map(),
      };
      if (fields.timepoints !== undefined || fields.timePoints !== undefined) {
        const pts = parsePoints(fields);
        if (typeof pts === 'string') return bad(pts);
        for (const p of pts) s.timePoints.set(p.date, p.value);
      }
      env.state.userSeries.set(s.id, s);
      return ok({ data: view(s) });
    }),
  );
  r.add('POST', '/userdefined/series/clone', ({ req }) =>
    withFields(req, (fields) => {
      const sourceId = str(fields.series_id) ?? str(fields.id) ?? req.query.get('series_id') ?? undefined;
      if (!sourceId) return bad('series_id is required');
      const source = find(sourceId);
      let clone: UserSeries;
      if (source) {
        clone = { ...source, timePoints: new Map(source.timePoints), name: `${source.name} (copy)` };
      } else if (/^\d+$/.test(sourceId)) {
        const info = seriesInfo(sourceId);
        clone = {
          id: '',
          name: `${info.name} (copy)`,
          description: `Clone of series ${sourceId}`,
          frequency: info.frequency.id,
          unit: info.unit.name,
          created_at: now(),
          updated_at: now(),
          timePoints: new Map(seriesTimePoints(info).map((p) => [p.date, p.value])),
        };
      } else return notFound(`Series ${sourceId}`);
      clone = {
        ...clone,
        id: env.state.nextId('UD'),
        clonedFrom: sourceId,
        created_at: now(),
        updated_at: now(),
      };
      if (str(fields.name)) clone.name = str(fields.name) ?? clone.name;
      env.state.userSeries.set(clone.id, clone);
      return ok({ data: view(clone) });
    }),
  );
  r.add('GET', '/userdefined/series/:id', ({ params }) => {
    const s = find(params.id);
    return s ? ok({ data: { total: 1, items: [view(s)] } }) : notFound(`Series ${params.id}`);
  });
  r.add('PATCH', '/userdefined/series/:id', ({ req, params }) =>
    withFields(req, (fields) => {
      const s = find(params.id);
      if (!s) return notFound(`Series ${params.id}`);
      for (const key of ['name', 'description', 'frequency', 'unit'] as const) {
        const v = str(fields[key]);
        if (v !== undefined) s[key] = v;
      }
      s.updated_at = now();
      return ok({ data: view(s) });
    }),
  );
  r.add('DELETE', '/userdefined/series/:id', ({ params }) => {
    const s = find(params.id);
    if (!s) return notFound(`Series ${params.id}`);
    env.state.userSeries.delete(s.id);
    return ok({ data: { id: s.id, deleted: true } });
  });
  r.add('GET', '/userdefined/series/:id/data', ({ params }) => {
    const s = find(params.id);
    return s ? ok({ data: [{ id: s.id, timePoints: points(s) }] }) : notFound(`Series ${params.id}`);
  });
  r.add('POST', '/userdefined/series/:id/timepoints', ({ req, params }) =>
    withFields(req, (fields) => {
      const s = find(params.id);
      if (!s) return notFound(`Series ${params.id}`);
      const pts = parsePoints(fields);
      if (typeof pts === 'string') return bad(pts);
      for (const p of pts) s.timePoints.set(p.date, p.value);
      s.updated_at = now();
      return ok({ data: { id: s.id, created: pts } });
    }),
  );
  r.add('DELETE', '/userdefined/series/:id/timepoints', ({ req, params }) => {
    const s = find(params.id);
    if (!s) return notFound(`Series ${params.id}`);
    const parsed = readFields(req);
    const fromBody = 'fields' in parsed ? str(parsed.fields.dates) : undefined;
    const wanted = listParam(req.query, 'dates').concat(fromBody ? fromBody.split(',') : []);
    const dates =
      wanted.length > 0 ? wanted.map((d) => isoDate(dateParam(d) ?? 0)) : [...s.timePoints.keys()];
    const deleted = dates.filter((d) => s.timePoints.delete(d));
    return ok({ data: { id: s.id, deleted } });
  });
  const pointPath = '/userdefined/series/:id/timepoints/:date';
  r.add('PATCH', pointPath, ({ req, params }) =>
    withFields(req, (fields) => {
      const s = find(params.id);
      const date = isoDate(dateParam(params.date) ?? 0);
      if (!s || !s.timePoints.has(date)) return notFound(`Time point ${params.date}`);
      const value = Number(fields.value);
      if (str(fields.value) === undefined || !Number.isFinite(value)) return bad('value must be a number');
      s.timePoints.set(date, value);
      return ok({ data: { id: s.id, date, value } });
    }),
  );
  r.add('DELETE', pointPath, ({ params }) => {
    const s = find(params.id);
    const date = isoDate(dateParam(params.date) ?? 0);
    if (!s || !s.timePoints.delete(date)) return notFound(`Time point ${params.date}`);
    return ok({ data: { id: s.id, date, deleted: true } });
  });
}
