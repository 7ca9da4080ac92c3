// Fake CEIC macroeconomic API v2 (shared/design/upstreams.md §2): base path /v2, key as `token` query or
// raw `Authorization: <key>`, envelopes {"data":[…]} / {"data":{total,items,facets}}, ResponseError
// bodies {"errors":{status,code,message}}, XML on request, partial series errors on HTTP 200.
import { randomBytes } from 'node:crypto';
import { FakeRouter, type RouteParams } from './fake-router.js';
import { type AuthResult, type FakeReply, type FakeRequest, FakeUpstream } from './fake-upstream.js';
import { bool, dateParam, type Fields, int, listParam, page, readFields, str } from './fake-params.js';
import {
  type FeedRecord,
  INSIGHT_CATEGORIES,
  type InsightRecord,
  isoDate,
  isoDateTime,
  layoutAncestors,
  layoutTree,
  type LayoutNode,
  MACRO_CLASSIFICATIONS,
  MACRO_COUNTRIES,
  MACRO_FREQUENCIES,
  MACRO_GEO,
  MACRO_INDICATORS,
  MACRO_REGIONS,
  MACRO_RELEASE_STATUSES,
  MACRO_RELEASE_TYPES,
  MACRO_SOURCES,
  MACRO_STATUSES,
  MACRO_UNITS,
  type MacroDumpRecord,
  type MacroFilterRecord,
  insights,
  macroDumps,
  macroFeeds,
  macroFilters,
  releases,
  seriesInfo,
  type SeriesInfo,
  seriesTimePoints,
  type TimePoint,
} from './sandbox-data.js';

export const MACRO_LANGS = ['en', 'zh', 'ru', 'id', 'jp'] as const;
export type MacroLang = (typeof MACRO_LANGS)[number];

export interface FakeMacroOptions {
  token: string;
  /** Enables POST /login (the gateway never forwards it; here for completeness). */
  username?: string;
  password?: string;
  now?: () => number;
}

interface MacroCtx {
  req: FakeRequest;
  params: RouteParams;
}

type MacroHandler = (ctx: MacroCtx) => FakeReply;

interface UserSeries {
  id: string;
  name: string;
  description: string;
  frequency: string;
  unit: string;
  created_at: string;
  updated_at: string;
  clonedFrom?: string;
  timePoints: Map<string, number>;
}

const ERRORS: Record<number, [code: string, message: string]> = {
  400: ['INVALID_INPUT_PARAMETER', 'Invalid input parameter'],
  401: ['INVALID_API_TOKEN', 'Invalid access token'],
  403: ['FORBIDDEN', 'Incorrect user permissions'],
  404: ['NOT_FOUND', 'Requested entity not found'],
  405: ['METHOD_NOT_ALLOWED', 'Method not allowed'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'Unsupported data format; only json and xml are supported'],
  429: ['TOO_MANY_REQUESTS', 'Too many requests'],
  500: ['ERR', 'Internal error'],
  502: ['BAD_GATEWAY', 'Bad gateway'],
  503: ['SERVICE_UNAVAILABLE', 'Service unavailable'],
  504: ['GATEWAY_TIMEOUT', 'Gateway timeout'],
};

/** A ResponseError answer: `{"errors":{status,code,message}}`. */
export function macroError(status: number, code?: string, message?: string): FakeReply {
  const [defCode, defMessage] = ERRORS[status] ?? ['ERR', `HTTP ${status}`];
  return { status, json: { errors: { status, code: code ?? defCode, message: message ?? defMessage } } };
}

const bad = (message: string): FakeReply => macroError(400, 'INVALID_INPUT_PARAMETER', message);
const notFound = (what: string): FakeReply => macroError(404, 'NOT_FOUND', `${what} not found`);
const ok = (json: unknown): FakeReply => ({ status: 200, json });

// 1×1 PNG, the answer of /series/{id}/visual.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** Query `format` wins over `Accept`; undefined = unsupported (415). */
export function negotiateFormat(req: FakeRequest): 'json' | 'xml' | undefined {
  const format = req.query.get('format');
  if (format !== null && format !== '') {
    const f = format.toLowerCase();
    return f === 'json' || f === 'xml' ? f : undefined;
  }
  const accept = String(req.headers.accept ?? '').toLowerCase();
  if (accept.trim() === '') return 'json';
  const types = accept.split(',').map((part) => (part.split(';')[0] ?? '').trim());
  if (types.some((t) => t === 'application/json' || t === 'text/json')) return 'json';
  if (types.some((t) => t === 'application/xml' || t === 'text/xml')) return 'xml';
  if (types.some((t) => t === '*/*' || t === 'application/*')) return 'json';
  return undefined;
}

/** Query `lang` wins over `Accept-Language`; unknown languages fall back to English. */
export function negotiateLang(req: FakeRequest): MacroLang {
  const isLang = (v: string): v is MacroLang => (MACRO_LANGS as readonly string[]).includes(v);
  const q = req.query.get('lang');
  if (q !== null && q !== '') return isLang(q.toLowerCase()) ? (q.toLowerCase() as MacroLang) : 'en';
  const header = String(req.headers['accept-language'] ?? '');
  const first = (header.split(',')[0] ?? '').split(';')[0]?.split('-')[0]?.trim().toLowerCase() ?? '';
  return isLang(first) ? first : 'en';
}

/** Visible translation: `name` and `title` fields get a "[zh] " prefix. */
function localize(value: unknown, lang: MacroLang): unknown {
  if (lang === 'en') return value;
  if (Array.isArray(value)) return value.map((v) => localize(v, lang));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] =
        (k === 'name' || k === 'title') && typeof v === 'string' ? `[${lang}] ${v}` : localize(v, lang);
    }
    return out;
  }
  return value;
}

function countSeries(node: LayoutNode): number {
  const { byId } = layoutTree();
  if (node.kind === 'table') return node.seriesIds.length;
  return node.childIds.reduce((n, id) => n + countSeries(byId.get(id) ?? node), 0);
}

function layoutItem(node: LayoutNode): unknown {
  return {
    subscribed: true,
    seriesCount: countSeries(node),
    metadata: { id: node.id, name: node.name },
    ui: { hasChildren: node.kind !== 'table', type: node.kind },
  };
}

function layoutFull(node: LayoutNode): unknown {
  return { data: [{ metadata: { id: node.id, name: node.name }, ancestors: layoutAncestors(node.id) }] };
}

function seriesMetadata(info: SeriesInfo, points: TimePoint[]): Record<string, unknown> {
  return {
    id: info.id,
    name: info.name,
    country: info.country,
    frequency: info.frequency,
    unit: info.unit,
    source: info.source,
    status: info.status,
    indicator: info.indicator,
    startDate: points[0]?.date,
    endDate: points[points.length - 1]?.date,
    lastUpdateTime: points[points.length - 1]?.lastUpdateTime,
    numberOfObservations: points.length,
    keySeries: false,
  };
}

function seriesLayout(info: SeriesInfo): unknown[] {
  if (!info.tableId) return [];
  const a = layoutAncestors(info.tableId);
  const { byId } = layoutTree();
  const ref = (id: string | undefined) => (id ? { id, name: byId.get(id)?.name ?? id } : undefined);
  return [{ database: ref(a.database), topic: ref(a.topic), section: ref(a.section), table: ref(a.table) }];
}

/** Time point narrowing from start_date, end_date, updated_after and count (latest N); a string = invalid. */
function pointFilter(q: URLSearchParams): ((points: TimePoint[]) => TimePoint[]) | string {
  const start = dateParam(q.get('start_date'));
  const end = dateParam(q.get('end_date'));
  const updated = dateParam(q.get('updated_after'));
  const count = int(q.get('count'));
  if ([start, end, updated].some((v) => Number.isNaN(v))) return 'Invalid date parameter';
  if (count !== undefined && (Number.isNaN(count) || count < 0))
    return 'count must be a non-negative integer';
  return (all) => {
    let points = all;
    if (start !== undefined) points = points.filter((p) => Date.parse(p.date) >= start);
    if (end !== undefined) points = points.filter((p) => Date.parse(p.date) <= end);
    if (updated !== undefined) points = points.filter((p) => Date.parse(`${p.lastUpdateTime}Z`) >= updated);
    if (count !== undefined) points = points.slice(Math.max(0, points.length - count));
    return points;
  };
}

const allTableSeries = (): SeriesInfo[] => {
  const out: SeriesInfo[] = [];
  for (const node of layoutTree().byId.values()) for (const id of node.seriesIds) out.push(seriesInfo(id));
  return out;
};

function searchSeries(q: URLSearchParams): { total: number; items: unknown[]; facets: unknown[] } | string {
  const limit = int(q.get('limit')) ?? 100;
  const offset = int(q.get('offset')) ?? 0;
  if (Number.isNaN(limit) || limit < 1 || limit > 100) return 'limit must be between 1 and 100';
  if (Number.isNaN(offset) || offset < 0) return 'offset must be a non-negative integer';
  const words = (q.get('keyword') ?? '')
    .toLowerCase()
    .split(/[\s;()]+/)
    .filter((w) => w !== '' && !['and', 'or', 'not'].includes(w));
  const freq = listParam(q, 'frequency');
  const geo = listParam(q, 'geo').concat(listParam(q, 'country'));
  const table = listParam(q, 'table');
  const matches = allTableSeries().filter(
    (s) =>
      words.every((w) => s.name.toLowerCase().includes(w)) &&
      (freq.length === 0 || freq.includes(s.frequency.id)) &&
      (geo.length === 0 || geo.includes(s.country.id)) &&
      (table.length === 0 || (s.tableId !== undefined && table.includes(s.tableId))) &&
      (bool(q.get('subscribed_only')) !== true || s.subscribed),
  );
  const facet = (id: string, key: (s: SeriesInfo) => string) => {
    const counts = new Map<string, number>();
    for (const s of matches) counts.set(key(s), (counts.get(key(s)) ?? 0) + 1);
    return { id, items: [...counts].map(([k, total]) => ({ id: k, total })) };
  };
  return {
    total: matches.length,
    items: page(matches, offset, limit).map((s) => ({
      id: s.id,
      subscribed: s.subscribed,
      metadata: seriesMetadata(s, seriesTimePoints(s)),
    })),
    facets: [facet('frequency', (s) => s.frequency.id), facet('country', (s) => s.country.id)],
  };
}

function insightJson(i: InsightRecord): Record<string, unknown> {
  return {
    id: i.id,
    name: i.name,
    description: i.description,
    categoryId: i.categoryId,
    tags: i.tags,
    created: i.created,
    seriesCount: i.seriesIds.length,
  };
}

/** Feeds and dumps share the list filters of GET /feeds. */
function listFilter<T extends { status: string }>(
  q: URLSearchParams,
  items: T[],
  createdOf: (item: T) => string,
  extra: (item: T) => boolean,
): T[] | string {
  const limit = int(q.get('limit')) ?? 100;
  const offset = int(q.get('offset')) ?? 0;
  if (Number.isNaN(limit) || limit < 1 || limit > 100) return 'limit must be between 1 and 100';
  if (Number.isNaN(offset) || offset < 0) return 'offset must be a non-negative integer';
  const statuses = listParam(q, 'status').map((s) => s.toUpperCase());
  const badStatus = statuses.find((s) => s !== 'ACTIVE' && s !== 'DELETED' && s !== 'COMPLETED');
  if (badStatus) return `status must be ACTIVE or DELETED, got ${badStatus}`;
  const after = dateParam(q.get('created_after'));
  const before = dateParam(q.get('created_before'));
  if (Number.isNaN(after) || Number.isNaN(before)) return 'created_after/created_before must be dates';
  const order = (q.get('created_order') ?? 'ASC').toUpperCase();
  if (order !== 'ASC' && order !== 'DESC') return 'created_order must be ASC or DESC';
  const created = (item: T): number => dateParam(createdOf(item)) ?? 0;
  const filtered = items.filter(
    (item) =>
      (statuses.length === 0 || statuses.includes(item.status)) &&
      (after === undefined || created(item) > after) &&
      (before === undefined || created(item) < before) &&
      extra(item),
  );
  // Array sort is stable, so entries created the same day keep their id order either way.
  filtered.sort((a, b) => (order === 'DESC' ? created(b) - created(a) : created(a) - created(b)));
  return page(filtered, offset, limit);
}

export class FakeMacroUpstream extends FakeUpstream {
  readonly token: string;
  private readonly username?: string;
  private readonly password?: string;
  private readonly router = new FakeRouter<MacroHandler>();
  private readonly sessions = new Set<string>();
  private feeds: FeedRecord[] = [];
  private filters: MacroFilterRecord[] = [];
  private dumps: Omit<MacroDumpRecord, 'downloadLink'>[] = [];
  private userSeries = new Map<string, UserSeries>();
  private seq = 0;
  private stateLoaded = false;

  constructor(opts: FakeMacroOptions) {
    super({ kind: 'macro', basePath: '/v2', now: opts.now });
    this.token = opts.token;
    this.username = opts.username;
    this.password = opts.password;
    this.registerRoutes();
  }

  protected override resetState(): void {
    this.stateLoaded = false;
  }

  /** Mutable per-instance state, built on first use (keeps start-up cheap). */
  private state(): void {
    if (this.stateLoaded) return;
    this.stateLoaded = true;
    this.feeds = macroFeeds();
    this.filters = macroFilters();
    this.dumps = macroDumps();
    this.seq = 0;
    this.userSeries = new Map();
    for (let i = 1; i <= 3; i++) {
      const info = seriesInfo(String(900000 + i));
      const points = new Map(
        seriesTimePoints(info)
          .slice(-12)
          .map((p) => [p.date, p.value]),
      );
      this.userSeries.set(`UD-${i}`, {
        id: `UD-${i}`,
        name: `My ${info.name}`,
        description: 'User-defined sandbox series',
        frequency: info.frequency.id,
        unit: info.unit.name,
        created_at: '2024-01-15T10:00:00',
        updated_at: '2024-06-01T10:00:00',
        timePoints: points,
      });
    }
  }

  private nextId(prefix: string): string {
    this.seq++;
    return `${prefix}-${9000 + this.seq}`;
  }

  protected override errorReply(status: number, message?: string): FakeReply {
    return macroError(status, undefined, message);
  }

  protected override authenticate(req: FakeRequest): AuthResult {
    if (req.path === '/login' || req.path.startsWith('/logout/') || req.path.startsWith('/downloads/')) {
      return { credential: '' };
    }
    const given = [req.query.get('token'), req.headers.authorization].filter(
      (v): v is string => typeof v === 'string' && v !== '',
    );
    if (given.length === 0) {
      return { reply: macroError(401, 'MISSED_API_TOKEN', 'Please use access token to get data') };
    }
    const valid = given.find((v) => v === this.token || this.sessions.has(v));
    return valid !== undefined ? { credential: valid } : { reply: macroError(401) };
  }

  protected override handle(req: FakeRequest): FakeReply {
    const match = this.router.match(req.method, req.path);
    if (match.kind === 'not-found') return notFound('Resource');
    if (match.kind === 'method-not-allowed') {
      return { ...macroError(405), headers: { allow: match.allowed.join(', ') } };
    }
    const format = negotiateFormat(req);
    if (format === undefined) return macroError(415);
    this.state();
    const reply = match.handler({ req, params: match.params });
    if (!('json' in reply) || (reply.status ?? 200) >= 300) return reply;
    return { ...reply, json: localize(reply.json, negotiateLang(req)), xml: format === 'xml' };
  }

  private registerRoutes(): void {
    const r = this.router;
    const get = (p: string, h: MacroHandler) => r.add('GET', p, h);

    // Session login, as the CEIC Python facade does it.
    r.add('POST', '/login', ({ req }) => {
      const fields = readFields(req);
      const body = 'fields' in fields ? fields.fields : {};
      const login =
        req.query.get('login') ?? req.query.get('username') ?? str(body.login) ?? str(body.username);
      const password = req.query.get('password') ?? str(body.password);
      if (login === undefined || login === null || login === '') {
        return macroError(400, 'MISSED_USER_LOGIN', 'Please provide user login');
      }
      if (this.username === undefined || login !== this.username || password !== this.password) {
        return macroError(401, 'ERR_INVALID_USER_PASSWORD', 'Invalid user name or password');
      }
      const session = randomBytes(16).toString('hex');
      this.sessions.add(session);
      return ok({ data: { session } });
    });
    r.add('DELETE', '/logout/:session', ({ params }) => {
      const destroyed = this.sessions.delete(params.session ?? '');
      return ok({ data: { session: params.session, destroyed } });
    });
    // Download links handed out by dumps and insight downloads point here (signed-link style, no key).
    get('/downloads/:name', ({ params }) =>
      this.fileReply('application/octet-stream', params.name ?? 'file'),
    );

    this.seriesRoutes(get);
    this.userSeriesRoutes();
    this.insightRoutes(get);
    this.layoutRoutes(get);
    this.dictionaryRoutes(get);
    this.filterRoutes();
    this.dumpRoutes();
    this.feedRoutes();
    this.releaseRoutes(get);
  }

  private seriesRoutes(get: (p: string, h: MacroHandler) => void): void {
    /** Multi-id answer: subscribed ids in `data`, unsubscribed ones as UNSUBSCRIBED_SERIES in `errors`. */
    const multi = (raw: string | undefined, build: (info: SeriesInfo) => unknown): FakeReply => {
      const ids = (raw ?? '').split(',').map((s) => s.trim());
      if (ids.some((id) => !/^\d+$/.test(id)))
        return macroError(400, 'INVALID_SERIES_ID', 'Invalid series id');
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

  private userSeriesRoutes(): void {
    const r = this.router;
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
    const find = (id: string | undefined): UserSeries | undefined => this.userSeries.get(id ?? '');
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
    const now = () => isoDateTime(this.now());

    r.add('GET', '/userdefined/series', ({ req }) => {
      const limit = int(req.query.get('limit')) ?? 100;
      const offset = int(req.query.get('offset')) ?? 0;
      if (Number.isNaN(limit) || Number.isNaN(offset)) return bad('limit and offset must be integers');
      const all = [...this.userSeries.values()];
      return ok({ data: { total: all.length, items: page(all, offset, limit).map(view) } });
    });
    r.add('POST', '/userdefined/series', ({ req }) =>
      withFields(req, (fields) => {
        const name = str(fields.name);
        if (!name) return bad('name is required');
        const s: UserSeries = {
          id: this.nextId('UD'),
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
        this.userSeries.set(s.id, s);
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
          id: this.nextId('UD'),
          clonedFrom: sourceId,
          created_at: now(),
          updated_at: now(),
        };
        if (str(fields.name)) clone.name = str(fields.name) ?? clone.name;
        this.userSeries.set(clone.id, clone);
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
      this.userSeries.delete(s.id);
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

  private insightRoutes(get: (p: string, h: MacroHandler) => void): void {
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
      const expires = this.now() + 3_600_000;
      return ok({
        data: {
          title: ins.name,
          format,
          downloadLink: `${this.url}/downloads/insight-${ins.id}.${format}?expires=${expires}`,
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

  private layoutRoutes(get: (p: string, h: MacroHandler) => void): void {
    const node = (id: string | undefined, kind: LayoutNode['kind']) => {
      const n = layoutTree().byId.get(id ?? '');
      return n?.kind === kind ? n : undefined;
    };
    const children = (id: string | undefined, kind: LayoutNode['kind']): FakeReply => {
      const n = node(id, kind);
      if (!n) return notFound(`Layout ${kind} ${id}`);
      const { byId } = layoutTree();
      return ok({ data: n.childIds.map((c) => layoutItem(byId.get(c) ?? n)) });
    };
    const full = (id: string | undefined, kind: LayoutNode['kind']): FakeReply => {
      const n = node(id, kind);
      return n ? ok(layoutFull(n)) : notFound(`Layout ${kind} ${id}`);
    };

    get('/layout/databases', () => ok({ data: layoutTree().databases.map(layoutItem) }));
    get('/layout/databases/:id/topics', ({ params }) => children(params.id, 'database'));
    get('/layout/topics/:id', ({ params }) => full(params.id, 'topic'));
    get('/layout/topics/:id/sections', ({ params }) => children(params.id, 'topic'));
    get('/layout/sections/:id', ({ params }) => full(params.id, 'section'));
    get('/layout/sections/:id/tables', ({ params }) => children(params.id, 'section'));
    get('/layout/tables/:id', ({ params }) => full(params.id, 'table'));
    get('/layout/tables/:id/series', ({ params }) => {
      const n = node(params.id, 'table');
      if (!n) return notFound(`Layout table ${params.id}`);
      return ok({
        data: n.seriesIds.map((id) => {
          const info = seriesInfo(id);
          return {
            entityId: id,
            subscribed: info.subscribed,
            metadata: seriesMetadata(info, seriesTimePoints(info)),
          };
        }),
      });
    });
    get('/layout/:node_code/footnote', ({ params }) => {
      const n = layoutTree().byId.get(params.node_code ?? '');
      if (!n) return notFound(`Layout node ${params.node_code}`);
      return ok({
        data: [
          {
            metadata: { id: n.id, name: n.name },
            footnote: `Data in ${n.name} are compiled from official sources.`,
            resources: [
              {
                id: `${n.id}-FN1`,
                name: `${n.name} methodology`,
                downloadLink: `${this.url}/downloads/${n.id}-FN1.pdf`,
              },
            ],
          },
        ],
      });
    });
  }

  private dictionaryRoutes(get: (p: string, h: MacroHandler) => void): void {
    get('/dictionary', () =>
      ok({
        data: {
          frequencies: MACRO_FREQUENCIES,
          units: MACRO_UNITS,
          statuses: MACRO_STATUSES,
          sources: MACRO_SOURCES,
          regions: MACRO_REGIONS,
          countries: MACRO_COUNTRIES,
          classifications: MACRO_CLASSIFICATIONS,
          indicators: MACRO_INDICATORS,
        },
      }),
    );
    get('/dictionary/classifications', () => ok({ data: MACRO_CLASSIFICATIONS }));
    get('/dictionary/classifications/:id/indicators', ({ params }) =>
      MACRO_CLASSIFICATIONS.some((c) => c.id === params.id)
        ? ok({ data: MACRO_INDICATORS.filter((i) => i.classificationId === params.id) })
        : notFound(`Classification ${params.id}`),
    );
    get('/dictionary/countries', () => ok({ data: MACRO_COUNTRIES }));
    get('/dictionary/countries/:id/sources', ({ params }) =>
      MACRO_COUNTRIES.some((c) => c.id === params.id)
        ? ok({ data: MACRO_SOURCES.filter((s) => s.countryId === params.id) })
        : notFound(`Country ${params.id}`),
    );
    get('/dictionary/frequencies', () => ok({ data: MACRO_FREQUENCIES }));
    get('/dictionary/geo', () => ok({ data: MACRO_GEO }));
    get('/dictionary/indicators', () => ok({ data: MACRO_INDICATORS }));
    get('/dictionary/layouts', () =>
      ok({ data: layoutTree().databases.map((d) => ({ id: d.id, name: d.name })) }),
    );
    get('/dictionary/regions', () => ok({ data: MACRO_REGIONS }));
    get('/dictionary/release_statuses', () => ok({ data: MACRO_RELEASE_STATUSES }));
    get('/dictionary/release_types', () => ok({ data: MACRO_RELEASE_TYPES }));
    get('/dictionary/sources', () => ok({ data: MACRO_SOURCES }));
    get('/dictionary/statuses', () => ok({ data: MACRO_STATUSES }));
    get('/dictionary/units', () => ok({ data: MACRO_UNITS }));
  }

  private filterRoutes(): void {
    const r = this.router;
    const find = (id: string | undefined) => this.filters.find((f) => f.id === id);
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
    r.add('GET', '/filters', () => ok({ data: this.filters }));
    r.add('POST', '/filters', ({ req }) => {
      const parsed = readFields(req);
      if ('error' in parsed) return bad(parsed.error);
      const name = str(parsed.fields.name);
      if (!name) return bad('name is required');
      const now = isoDateTime(this.now());
      const filter: MacroFilterRecord = {
        id: this.nextId('FL'),
        name,
        description: str(parsed.fields.description) ?? '',
        created_at: now,
        last_updated_at: now,
        creator_id: 'U-4400',
        filter_details: details(parsed.fields),
      };
      this.filters.push(filter);
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
      f.last_updated_at = isoDateTime(this.now());
      return ok({ data: f });
    });
    r.add('DELETE', '/filters/:id', ({ params }) => {
      const f = find(params.id);
      if (!f) return notFound(`Filter ${params.id}`);
      this.filters = this.filters.filter((x) => x !== f);
      return ok({ data: { id: f.id, deleted: true } });
    });
  }

  private dumpRoutes(): void {
    const r = this.router;
    const view = (d: Omit<MacroDumpRecord, 'downloadLink'>): MacroDumpRecord => ({
      ...d,
      downloadLink: `${this.url}/downloads/dump-${d.id}.zip?expires=${Date.parse(`${d.downloadLinkExpiration}Z`)}`,
    });
    r.add('GET', '/dumps', ({ req }) => {
      const feedIds = listParam(req.query, 'feed_id');
      const result = listFilter(
        req.query,
        this.dumps,
        (d) => d.created,
        (d) => feedIds.length === 0 || feedIds.includes(d.feed_id),
      );
      return typeof result === 'string' ? bad(result) : ok({ data: { dumps: result.map(view) } });
    });
    r.add('POST', '/dumps', ({ req }) => {
      const parsed = readFields(req);
      if ('error' in parsed) return bad(parsed.error);
      const feedId = str(parsed.fields.feed_id) ?? str(parsed.fields.filter_id);
      if (!feedId) return bad('feed_id or filter_id is required');
      const created = this.now();
      const dump = {
        id: this.nextId('DP'),
        name: str(parsed.fields.name) ?? `Dump of ${feedId}`,
        feed_id: feedId,
        status: 'COMPLETED',
        progress: 100,
        totalSeriesNumber: 100,
        collectedSeriesNumber: 100,
        downloadLinkExpiration: isoDateTime(created + 7 * 86_400_000),
        created: isoDateTime(created),
      };
      this.dumps.push(dump);
      return ok({ data: view(dump) });
    });
    r.add('GET', '/dumps/:id', ({ params }) => {
      const d = this.dumps.find((x) => x.id === params.id);
      return d ? ok({ data: view(d) }) : notFound(`Dump ${params.id}`);
    });
    r.add('DELETE', '/dumps/:id', ({ params }) => {
      const d = this.dumps.find((x) => x.id === params.id);
      if (!d) return notFound(`Dump ${params.id}`);
      this.dumps = this.dumps.filter((x) => x !== d);
      return ok({ data: { ...view(d), status: 'DELETED' } });
    });
  }

  private feedRoutes(): void {
    const r = this.router;
    const find = (id: string | undefined) => this.feeds.find((f) => f.id === id);
    /** Applies POST/PATCH form fields; returns an error message or undefined. */
    const apply = (feed: FeedRecord, fields: Fields, patch: boolean): string | undefined => {
      const name = str(fields.name);
      const description = str(fields.description);
      if (name !== undefined && name.length > 100) return 'name must be at most 100 characters';
      if (description !== undefined && description.length > 1000)
        return 'description must be at most 1000 characters';
      const filterId = str(fields.filter_id);
      if (filterId !== undefined) {
        const filter = this.filters.find((f) => f.id === filterId);
        if (!filter) return `unknown filter_id ${filterId}`;
        Object.assign(feed, {
          filter_id: filter.id,
          filter_name: filter.name,
          filter_description: filter.description,
        });
      }
      const frequency = int(fields.frequency);
      if (Number.isNaN(frequency)) return 'frequency must be an integer';
      const fullDump = bool(fields.full_dump);
      const metadataOnly = bool(fields.metadata_only);
      if (fullDump === null || metadataOnly === null) return 'boolean fields take true/false or 1/0';
      const status = str(fields.status)?.toUpperCase();
      if (status !== undefined && (!patch || (status !== 'ACTIVE' && status !== 'DELETED'))) {
        return 'status must be ACTIVE or DELETED (PATCH only)';
      }
      const text: Array<[keyof FeedRecord, string]> = [
        ['name', 'name'],
        ['description', 'description'],
        ['consolidation_method', 'consolidation'],
        ['delivery_method', 'delivery'],
        ['user_ftp_url', 'user_ftp_url'],
        ['delivery_path', 'user_ftp_path'],
        ['user_ftp_username', 'user_ftp_username'],
        ['notification_email', 'notification_email'],
        ['notification_url', 'notification_url'],
        ['notification_http_method', 'notification_http_method'],
        ['language', 'language'],
      ];
      const target = feed as unknown as Record<string, unknown>;
      for (const [key, field] of text) {
        const v = str(fields[field]);
        if (v !== undefined) target[key] = v;
      }
      if (frequency !== undefined) feed.frequency = frequency;
      if (fullDump !== undefined) feed.full_dump = fullDump;
      if (metadataOnly !== undefined) feed.metadata_only = metadataOnly;
      if (status === 'ACTIVE' || status === 'DELETED') feed.status = status;
      feed.feed_updated_at = isoDateTime(this.now());
      return undefined;
    };

    r.add('GET', '/feeds', ({ req }) => {
      const filterIds = listParam(req.query, 'filter_id');
      const result = listFilter(
        req.query,
        this.feeds,
        (f) => f.created_at,
        (f) => filterIds.length === 0 || filterIds.includes(f.filter_id),
      );
      return typeof result === 'string' ? bad(result) : ok({ data: result });
    });
    r.add('POST', '/feeds', ({ req }) => {
      const parsed = readFields(req);
      if ('error' in parsed) return bad(parsed.error);
      if (!str(parsed.fields.filter_id)) return bad('filter_id is required');
      const now = this.now();
      const feed: FeedRecord = {
        id: this.nextId('FD'),
        name: '',
        description: '',
        filter_id: '',
        filter_name: '',
        filter_description: '',
        status: 'ACTIVE',
        user_id: 'U-4400',
        frequency: 1,
        created_at: isoDate(now),
        feed_updated_at: isoDateTime(now),
        language: 'en',
        consolidation_method: 'none',
        delivery_method: 'api',
        delivery_format: 'csv',
        delivery_path: '',
        user_ftp_url: '',
        user_ftp_username: '',
        notification_email: '',
        notification_url: '',
        notification_http_method: '',
        updated_after: isoDateTime(now),
        full_dump: false,
        metadata_only: false,
      };
      const error = apply(feed, parsed.fields, false);
      if (error) return bad(error);
      this.feeds.push(feed);
      return ok({ data: feed });
    });
    // The vendor file types GET/PATCH/DELETE /feeds/{id} as a bare FeedInformation (upstreams.md §2.2).
    r.add('GET', '/feeds/:id', ({ params }) => {
      const feed = find(params.id);
      return feed ? ok(feed) : notFound(`Feed ${params.id}`);
    });
    r.add('PATCH', '/feeds/:id', ({ req, params }) => {
      const feed = find(params.id);
      if (!feed) return notFound(`Feed ${params.id}`);
      const parsed = readFields(req);
      if ('error' in parsed) return bad(parsed.error);
      const copy = structuredClone(feed);
      const error = apply(copy, parsed.fields, true);
      if (error) return bad(error);
      Object.assign(feed, copy);
      return ok(feed);
    });
    r.add('DELETE', '/feeds/:id', ({ params }) => {
      const feed = find(params.id);
      if (!feed) return notFound(`Feed ${params.id}`);
      feed.status = 'DELETED';
      feed.feed_updated_at = isoDateTime(this.now());
      return ok(feed);
    });
  }

  private releaseRoutes(get: (p: string, h: MacroHandler) => void): void {
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
}
