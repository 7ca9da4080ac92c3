// Fake EMIS Company API v2 (shared/design/upstreams.md §3): base path /v2/company, `token` query only,
// envelope {"data":{"items":[…]}} with camelCase fields. The real error bodies are unknown, so the
// default ones vary by status (see companyErrorBody) and failWith can script any other shape.
import { FakeRouter, type RouteParams } from './fake-router.js';
import { type AuthResult, type FakeReply, type FakeRequest, FakeUpstream } from './fake-upstream.js';
import { type Fields, int, page, readFields, str } from './fake-params.js';
import {
  COMPANY_ACCOUNTS,
  COMPANY_STANDARDS,
  companies,
  companyById,
  type CompanyRecord,
  companyStatements,
  createRng,
  INDUSTRY_CLASSES,
  isoDateTime,
  MACRO_COUNTRIES,
  statementAccounts,
  statementById,
  type StatementRecord,
} from './sandbox-data.js';

export interface FakeCompanyOptions {
  token: string;
  now?: () => number;
}

export type CompanyErrorShape = 'error-object' | 'errors-array' | 'flat';

/**
 * The three error shapes the company fake uses: `{"error":{code,message}}` (401, 403, 429, 5xx),
 * `{"errors":[{code,message}]}` (400) and `{"message","code":<status>}` (404).
 */
export function companyErrorBody(
  shape: CompanyErrorShape,
  status: number,
  code: string,
  message: string,
): object {
  if (shape === 'errors-array') return { errors: [{ code, message }] };
  if (shape === 'flat') return { message, code: status };
  return { error: { code, message } };
}

const DEFAULT_ERRORS: Record<number, [CompanyErrorShape, string, string]> = {
  400: ['errors-array', 'INVALID_PARAMETER', 'Invalid parameter'],
  401: ['error-object', 'INVALID_TOKEN', 'Invalid or missing token'],
  403: ['error-object', 'FORBIDDEN', 'Access to this resource is not included in the subscription'],
  404: ['flat', 'NOT_FOUND', 'Not found'],
  405: ['error-object', 'METHOD_NOT_ALLOWED', 'Method not allowed'],
  429: ['error-object', 'RATE_LIMIT_EXCEEDED', 'Too many requests'],
};

export function companyError(status: number, message?: string): FakeReply {
  const [shape, code, defMessage] = DEFAULT_ERRORS[status] ?? [
    'error-object',
    'INTERNAL_ERROR',
    'Internal error',
  ];
  return { status, json: companyErrorBody(shape, status, code, message ?? defMessage) };
}

const bad = (message: string): FakeReply => companyError(400, message);
const notFound = (): FakeReply => companyError(404);
const items = (list: unknown[], total = list.length): FakeReply => ({
  status: 200,
  json: { data: { total, items: list } },
});

type Handler = (req: FakeRequest, params: RouteParams) => FakeReply;

const KIND_NAMES: Record<CompanyRecord['kind'], string> = {
  banking: 'Bank',
  insurance: 'Insurance company',
  'non-financial': 'Non-financial company',
};

function searchItem(c: CompanyRecord): Record<string, unknown> {
  return {
    companyId: c.companyId,
    companyName: c.companyName,
    countryCode: c.countryCode,
    city: c.city,
    companyType: KIND_NAMES[c.kind],
    industryClass: c.industryClass,
    legalForm: c.legalForm,
    operationalStatus: c.operationalStatus,
  };
}

function details(c: CompanyRecord): Record<string, unknown> {
  const rng = createRng(`company-details:${c.companyId}`);
  return {
    ...searchItem(c),
    companyName: c.companyName,
    localName: c.companyName.toUpperCase(),
    address: { city: c.city, countryCode: c.countryCode, street: `Main Street ${rng.int(1, 200)}` },
    externalIds: c.externalIds,
    incorporationYear: c.incorporationYear,
    website: c.website,
    ownerType: c.ownerType,
    employees: { number: c.employees, year: 2023 },
    latestFinancials: { revenue: String(c.revenueUsd), currency: 'USD', year: 2023 },
    executives: [
      {
        name: `Anna ${c.companyName.split(' ')[0] ?? 'Nowak'}`,
        position: { code: 'CEO', name: 'Chief Executive' },
      },
    ],
    ...(c.stockExchange
      ? {
          marketData: {
            stockExchange: c.stockExchange,
            latest: {
              turnover: String(rng.int(1e5, 1e8)),
              volume: String(rng.int(1e3, 1e6)),
              marketCapitalization: { value: String(c.revenueUsd * 2), currency: 'USD' },
              close: { value: String(rng.int(1, 500)), date: '2024-12-31' },
            },
          },
        }
      : {}),
  };
}

function statementView(s: StatementRecord): Record<string, unknown> {
  const standard = COMPANY_STANDARDS.find((x) => x.id === s.standardId);
  return {
    statementId: s.statementId,
    companyId: s.companyId,
    year: s.year,
    period: s.period,
    financialStandard: { id: s.standardId, code: standard?.code, name: standard?.name },
    currency: { code: s.currency },
    consolidated: s.consolidated,
  };
}

/** In-memory create/read/update/delete state for dumps, feeds and search filters. */
class CrudStore {
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

export class FakeCompanyUpstream extends FakeUpstream {
  readonly token: string;
  private readonly router = new FakeRouter<Handler>();
  private readonly dumps: CrudStore;
  private readonly feeds: CrudStore;
  private readonly filters: CrudStore;

  constructor(opts: FakeCompanyOptions) {
    super({ kind: 'company', basePath: '/v2/company', now: opts.now });
    this.token = opts.token;
    const created = '2024-03-01T10:00:00';
    this.filters = new CrudStore(() => [
      { name: 'Polish banks', criteria: { countryCode: ['PL'], companyType: ['banking'] }, created },
      { name: 'Large employers', criteria: { employeesFrom: 10000 }, created },
    ]);
    this.feeds = new CrudStore(() => [
      { name: 'Daily PL banks', searchFilterId: 1, status: 'ACTIVE', created },
    ]);
    this.dumps = new CrudStore(() => [
      { name: 'PL banks dump', searchFilterId: 1, status: 'COMPLETED', created },
    ]);
    this.registerRoutes();
  }

  protected override resetState(): void {
    this.dumps.reset();
    this.feeds.reset();
    this.filters.reset();
  }

  protected override errorReply(status: number, message?: string): FakeReply {
    return companyError(status, message);
  }

  protected override authenticate(req: FakeRequest): AuthResult {
    const token = req.query.get('token');
    if (token === null || token === '') return { reply: companyError(401, 'Missing token') };
    return token === this.token ? { credential: token } : { reply: companyError(401, 'Invalid token') };
  }

  protected override handle(req: FakeRequest): FakeReply {
    const match = this.router.match(req.method, req.path);
    if (match.kind === 'not-found') return notFound();
    if (match.kind === 'method-not-allowed') {
      return { ...companyError(405), headers: { allow: match.allowed.join(', ') } };
    }
    return match.handler(req, match.params);
  }

  private registerRoutes(): void {
    const get = (p: string, h: Handler) => this.router.add('GET', p, h);

    // Literal /companies/... paths first: /companies/{id} would swallow them.
    const search = (filter: (c: CompanyRecord, req: FakeRequest) => boolean): Handler => {
      return (req) => {
        const q = req.query;
        const limit = int(q.get('limit')) ?? 20;
        const offset = int(q.get('offset')) ?? 0;
        if (Number.isNaN(limit) || limit < 1 || limit > 100) return bad('limit must be between 1 and 100');
        if (Number.isNaN(offset) || offset < 0) return bad('offset must be a non-negative integer');
        const name = (q.get('company_name') ?? q.get('name') ?? q.get('term') ?? '').toLowerCase();
        const countries = (q.get('country_code') ?? q.get('country') ?? '')
          .split(',')
          .map((s) => s.trim().toUpperCase())
          .filter((s) => s !== '');
        const found = companies().filter(
          (c) =>
            filter(c, req) &&
            (name === '' || c.companyName.toLowerCase().includes(name)) &&
            (countries.length === 0 || countries.includes(c.countryCode)),
        );
        return items(page(found, offset, limit).map(searchItem), found.length);
      };
    };
    get(
      '/companies',
      search(() => true),
    );
    get(
      '/companies/banking',
      search((c) => c.kind === 'banking'),
    );
    get(
      '/companies/insurance',
      search((c) => c.kind === 'insurance'),
    );
    get(
      '/companies/non-financial',
      search((c) => c.kind === 'non-financial'),
    );
    get('/companies/local/:standard_id', (req, params) => {
      const id = Number(params.standard_id);
      if (!COMPANY_STANDARDS.some((s) => s.id === id)) return notFound();
      return search((c) => c.standardIds.includes(id))(req, params);
    });
    get('/companies/match', (req) => {
      const q = req.query;
      const name = (q.get('company_name') ?? '').toLowerCase();
      const country = (q.get('country_code') ?? '').toUpperCase();
      const external = q.get('external_id') ?? '';
      const limit = int(q.get('limit')) ?? 10;
      if (Number.isNaN(limit) || limit < 1 || limit > 100) return bad('limit must be between 1 and 100');
      if (name === '' && external === '') return bad('company_name or external_id is required');
      const scored = companies()
        .map((c) => {
          let score = 0;
          if (external !== '' && c.externalIds.some((e) => e.value === external)) score = 1;
          else if (name !== '' && c.companyName.toLowerCase() === name) score = 0.95;
          else if (name !== '' && c.companyName.toLowerCase().includes(name)) score = 0.7;
          if (country !== '' && c.countryCode !== country) score = 0;
          return { c, score };
        })
        .filter((x) => x.score > 0)
        .sort((a, b) => b.score - a.score);
      return items(
        scored
          .slice(0, limit)
          .map(({ c, score }) => ({ ...searchItem(c), externalIds: c.externalIds, score })),
        scored.length,
      );
    });

    this.crudRoutes('/companies/dumps', this.dumps, ['name'], { status: 'IN_PROGRESS' }, false);
    this.crudRoutes('/companies/feeds', this.feeds, ['name'], { status: 'ACTIVE' }, true);
    this.crudRoutes('/companies/search/filters', this.filters, ['name'], {}, true);

    get('/companies/statements/:id', (_req, params) => {
      const s = statementById(Number(params.id));
      if (!s) return notFound();
      return items([
        { ...statementView(s), accounts: statementAccounts(s).map(({ code, value }) => ({ code, value })) },
      ]);
    });
    const accounts = (req: FakeRequest, params: RouteParams, standardId?: number): FakeReply => {
      const s = statementById(Number(params.id));
      if (!s) return notFound();
      if (standardId !== undefined && (Number.isNaN(standardId) || standardId !== s.standardId))
        return notFound();
      const currency = (req.query.get('currency') ?? s.currency).toUpperCase();
      // A fixed rate keeps converted values deterministic.
      const rate = currency === s.currency ? 1 : currency === 'EUR' ? 0.92 : 1.1;
      return items(
        statementAccounts(s).map(({ id, code, value }) => ({
          accountId: id,
          code,
          name: COMPANY_ACCOUNTS.find((a) => a.id === id)?.name,
          value: Math.round(value * rate),
          currency,
        })),
      );
    };
    get('/companies/statements/:id/accounts', (req, params) => accounts(req, params));
    get('/companies/statements/:id/accounts/:standard_id', (req, params) =>
      accounts(req, params, Number(params.standard_id)),
    );

    const company = (params: RouteParams): CompanyRecord | undefined =>
      /^\d+$/.test(params.id ?? '') ? companyById(Number(params.id)) : undefined;
    get('/companies/:id', (_req, params) => {
      const c = company(params);
      return c ? items([details(c)]) : notFound();
    });
    get('/companies/:id/external_download/:class_code', (_req, params) => {
      const c = company(params);
      if (!c) return notFound();
      const classCode = (params.class_code ?? '').replace(/[^\w.-]/g, '_');
      // XLSX files are zip archives: start with the zip magic so clients sniffing the type are content.
      return this.fileReply(
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        `company-${c.companyId}-${classCode}.xlsx`,
        'PK\x03\x04',
      );
    });
    const statements = (req: FakeRequest, params: RouteParams, standardId?: number): FakeReply => {
      const c = company(params);
      if (!c) return notFound();
      const limit = int(req.query.get('limit')) ?? 20;
      const year = int(req.query.get('year'));
      if (Number.isNaN(limit) || Number.isNaN(year)) return bad('limit and year must be integers');
      const list = companyStatements(c.companyId).filter(
        (s) =>
          (standardId === undefined || s.standardId === standardId) &&
          (year === undefined || s.year === year),
      );
      return items(list.slice(0, limit).map(statementView), list.length);
    };
    get('/companies/:id/statements', (req, params) => statements(req, params));
    get('/companies/:id/statements/:standard_id', (req, params) => {
      const standardId = Number(params.standard_id);
      if (!COMPANY_STANDARDS.some((s) => s.id === standardId)) return notFound();
      return statements(req, params, standardId);
    });
    get('/companies/:id/benchmark', (_req, params) => {
      const c = company(params);
      if (!c) return notFound();
      const rng = createRng(`benchmark:${c.companyId}`);
      return {
        status: 200,
        json: {
          data: {
            financial_scores: [2021, 2022, 2023].map((year) => ({
              year,
              score: rng.int(1, 100),
              peerMedian: rng.int(30, 70),
              industryClass: c.industryClass.code,
            })),
          },
        },
      };
    });

    this.dictionaryRoutes(get);
  }

  private dictionaryRoutes(get: (p: string, h: Handler) => void): void {
    const list =
      (data: unknown[]): Handler =>
      () =>
        items(data);
    get(
      '/dictionary/cities',
      list(
        MACRO_COUNTRIES.flatMap((c, i) =>
          [1, 2, 3].map((n) => ({ cityId: i * 10 + n, name: `${c.name} City ${n}`, countryCode: c.id })),
        ),
      ),
    );
    get('/dictionary/company_types', list(Object.entries(KIND_NAMES).map(([id, name]) => ({ id, name }))));
    get('/dictionary/countries', list(MACRO_COUNTRIES.map((c) => ({ countryCode: c.id, name: c.name }))));
    get(
      '/dictionary/currencies',
      list([
        { currencyCode: 'USD', name: 'US Dollar' },
        { currencyCode: 'EUR', name: 'Euro' },
        { currencyCode: 'PLN', name: 'Polish Zloty' },
        { currencyCode: 'HUF', name: 'Hungarian Forint' },
      ]),
    );
    get('/dictionary/industries/classes', list([...INDUSTRY_CLASSES]));
    get('/dictionary/industries/classes/:class_code', (_req, params) => {
      const c = INDUSTRY_CLASSES.find((x) => x.code === params.class_code);
      return c ? items([{ ...c, level: 4, standard: 'NAICS-like' }]) : notFound();
    });
    get(
      '/dictionary/legal_forms',
      list(
        [...new Set(companies().map((c) => `${c.countryCode}|${c.legalForm}`))].map((k, i) => {
          const [countryCode, name] = k.split('|');
          return { id: i + 1, name, countryCode };
        }),
      ),
    );
    get(
      '/dictionary/market_segments',
      list([
        { id: 1, name: 'Main market' },
        { id: 2, name: 'Alternative market' },
      ]),
    );
    get(
      '/dictionary/operational_statuses',
      list([
        { id: 1, name: 'Operational' },
        { id: 2, name: 'In liquidation' },
      ]),
    );
    get(
      '/dictionary/owner_types',
      list(['Private', 'State', 'Foreign'].map((name, i) => ({ id: i + 1, name }))),
    );
    get(
      '/dictionary/periods',
      list([
        { id: 'Y', name: 'Yearly' },
        { id: 'H', name: 'Half-yearly' },
        { id: 'Q', name: 'Quarterly' },
      ]),
    );
    get(
      '/dictionary/regions',
      list(
        MACRO_COUNTRIES.map((c, i) => ({ regionId: 100 + i, name: `${c.name} Central`, countryCode: c.id })),
      ),
    );
    get('/dictionary/standards', list([...COMPANY_STANDARDS]));
    const standard = (params: RouteParams) => COMPANY_STANDARDS.find((s) => s.id === Number(params.id));
    get('/dictionary/standards/:id', (_req, params) => {
      const s = standard(params);
      return s ? items([s]) : notFound();
    });
    get('/dictionary/standards/:id/accounts', (_req, params) =>
      standard(params) ? items(COMPANY_ACCOUNTS.map(({ id, name }) => ({ id, name }))) : notFound(),
    );
    get('/dictionary/standards/:id/accounts/:account_id', (_req, params) => {
      const a = COMPANY_ACCOUNTS.find((x) => x.id === Number(params.account_id));
      return standard(params) && a
        ? items([{ ...a, details: { standardId: Number(params.id) } }])
        : notFound();
    });
    get(
      '/dictionary/stock_exchanges',
      list(
        MACRO_COUNTRIES.map((c) => ({
          code: `${c.id}SE`,
          name: `${c.name} Stock Exchange`,
          countryCode: c.id,
        })),
      ),
    );
  }

  private crudRoutes(
    path: string,
    store: CrudStore,
    required: string[],
    defaults: Record<string, unknown>,
    patchable: boolean,
  ): void {
    const r = this.router;
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
        return items([store.create({ ...defaults, ...fields, created: isoDateTime(this.now()) })]);
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
          Object.assign(rec, rest, { updated: isoDateTime(this.now()) });
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
}
