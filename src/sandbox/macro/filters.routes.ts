// Fake CEIC saved search filters (per-instance state).
import type { FakeRouter } from '../fake-router.js';
import { type MacroEnv, type MacroHandler, bad, notFound, ok } from './macro-errors.js';
import { type Fields, readFields, str } from '../fake-params.js';
import { isoDateTime } from '../data/seeded.js';
import type { MacroFilterRecord } from './feeds.data.js';

export function filterRoutes(r: FakeRouter<MacroHandler>, env: MacroEnv): void {
  const find = (id: string | undefined) => env.state.filters.find((f) => f.id === id);
  const details = (fields: Fields, prev?: MacroFilterRecord['filter_details']) => {
    let raw: unknown = fields.filter_details;
    if (typeof raw === 'string') {
      try {
        raw = JSON.parse(raw);
      } catch {
        raw = undefined;
      }
    }
    const d = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const list = (v: unknown, fallback: string[]) =>
      Array.isArray(v) ? v.map(String) : (str(v)?.split(',') ?? fallback);
    return {
      keyword: str(d.keyword) ?? str(fields.keyword) ?? prev?.keyword ?? '',
      frequency: list(d.frequency ?? fields.frequency, prev?.frequency ?? []),
      geo: list(d.geo ?? fields.geo, prev?.geo ?? []),
    };
  };
  r.add('GET', '/filters', () => ok({ data: env.state.filters }));
  r.add('POST', '/filters', ({ req }) => {
    const parsed = readFields(req);
    if ('error' in parsed) return bad(parsed.error);
    const name = str(parsed.fields.name);
    if (!name) return bad('name is required');
    const now = isoDateTime(env.now());
    const filter: MacroFilterRecord = {
      id: env.state.nextId('FL'),
      name,
      description: str(parsed.fields.description) ?? '',
      created_at: now,
      last_updated_at: now,
      creator_id: 'U-4400',
      filter_details: details(parsed.fields),
    };
    env.state.filters.push(filter);
    return ok({ data: filter });
  });
  r.add('GET', '/filters/:id', ({ params }) => {
    const f = find(params.id);
    return f ? ok({ data: [f] }) : notFound(`Filter ${params.id}`);
  });
  r.add('PATCH', '/filters/:id', ({ req, params }) => {
    const f = find(params.id);
    if (!f) return notFound(`Filter ${params.id}`);
    const parsed = readFields(req);
    if ('error' in parsed) return bad(parsed.error);
    f.name = str(parsed.fields.name) ?? f.name;
    f.description = str(parsed.fields.description) ?? f.description;
    f.filter_details = details(parsed.fields, f.filter_details);
    f.last_updated_at = isoDateTime(env.now());
    return ok({ data: f });
  });
  r.add('DELETE', '/filters/:id', ({ params }) => {
    const f = find(params.id);
    if (!f) return notFound(`Filter ${params.id}`);
    env.state.filters = env.state.filters.filter((x) => x !== f);
    return ok({ data: { id: f.id, deleted: true } });
  });
}
