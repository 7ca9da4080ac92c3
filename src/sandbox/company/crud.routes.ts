// The fake Company v2's saved objects (dumps, feeds, search filters): an in-memory store and its
// list/create/read/update/delete routes.
import { isoDateTime } from '../data/seeded.js';
import { type Fields, int, page, readFields, str } from '../fake-params.js';
import type { FakeRouter } from '../fake-router.js';
import type { FakeReply, FakeRequest } from '../fake-upstream.js';
import { bad, type CompanyHandler, items, notFound } from './company-errors.js';

/** In-memory create/read/update/delete state for dumps, feeds and search filters. */
export class CrudStore {
  private records = new Map<number, Record<string, unknown>>();
  private next = 1;

  constructor(private readonly seed: () => Record<string, unknown>[]) {
    this.reset();
  }

  reset(): void {
    this.records = new Map();
    this.next = 1;
    for (const r of this.seed()) this.create(r);
  }

  list(): Record<string, unknown>[] {
    return [...this.records.values()];
  }

  get(id: string | undefined): Record<string, unknown> | undefined {
    return this.records.get(Number(id));
  }

  create(fields: Record<string, unknown>): Record<string, unknown> {
    const id = this.next++;
    const record = { id, ...fields };
    this.records.set(id, record);
    return record;
  }

  delete(id: string | undefined): boolean {
    return this.records.delete(Number(id));
  }
}

export function crudRoutes(
  router: FakeRouter<CompanyHandler>,
  now: () => number,
  path: string,
  store: CrudStore,
  required: string[],
  defaults: Record<string, unknown>,
  patchable: boolean,
): void {
  const r = router;
  const withFields = (req: FakeRequest, f: (fields: Fields) => FakeReply): FakeReply => {
    const parsed = readFields(req);
    return 'error' in parsed ? bad(parsed.error) : f(parsed.fields);
  };
  r.add('GET', path, (req) => {
    const limit = int(req.query.get('limit')) ?? 100;
    const offset = int(req.query.get('offset')) ?? 0;
    if (Number.isNaN(limit) || Number.isNaN(offset)) return bad('limit and offset must be integers');
    const all = store.list();
    return items(page(all, offset, limit), all.length);
  });
  r.add('POST', path, (req) =>
    withFields(req, (fields) => {
      const missing = required.find((k) => str(fields[k]) === undefined);
      if (missing) return bad(`${missing} is required`);
      return items([store.create({ ...defaults, ...fields, created: isoDateTime(now()) })]);
    }),
  );
  r.add('GET', `${path}/:id`, (_req, params) => {
    const rec = store.get(params.id);
    return rec ? items([rec]) : notFound();
  });
  if (patchable) {
    r.add('PATCH', `${path}/:id`, (req, params) =>
      withFields(req, (fields) => {
        const rec = store.get(params.id);
        if (!rec) return notFound();
        const { id: _ignored, ...rest } = fields;
        Object.assign(rec, rest, { updated: isoDateTime(now()) });
        return items([rec]);
      }),
    );
  }
  r.add('DELETE', `${path}/:id`, (_req, params) => {
    const rec = store.get(params.id);
    if (!rec || !store.delete(params.id)) return notFound();
    return items([{ ...rec, deleted: true }]);
  });
}
