// Fake EMIS Documents API, called news by the vendor (design notes, upstreams.md §4): base path /news, every documents
// function of the spec plus the Auth functions, JSON and /xml/ variants, usage reports recorded.
import { dateParam, emisArray } from '../fake-params.js';
import {
  EMIS_CODES,
  EmisError,
  type FakeEmisOptions,
  FakeEmisUpstream,
  emisInt,
  emisRequired,
} from '../emis/fake-emis.upstream.js';
import type { FakeReply } from '../fake-upstream.js';
import { companies } from '../company/company.data.js';
import {
  EMIS_COUNTRIES,
  EMIS_FORMATS,
  EMIS_INDUSTRIES,
  EMIS_LANGUAGES,
  EMIS_PUBLICATION_TYPES,
  EMIS_SOURCE_TYPES,
  EMIS_TOPICS,
  emisPublications,
} from '../emis/emis-dictionaries.data.js';
import { type DocumentRecord, documents } from './documents.data.js';

export type FakeDocumentsOptions = FakeEmisOptions;

export interface UsageRecord {
  documentId: number;
  accessTime?: string;
  /** The token or session id the report came with. */
  credential: string;
  via: 'report' | 'reportMultiple';
}

const T = 'Emis\\Entity\\Api\\';

const FILE_TYPES: Record<string, string> = {
  PDF: 'application/pdf',
  DOC: 'application/msword',
  XLS: 'application/vnd.ms-excel',
};

const ORDERS = ['newest', 'oldest', 'relevance', 'id_asc', 'id_desc'];

function typed(type: string, entity: object): Record<string, unknown> {
  return { _type: `${T}${type}`, ...entity };
}

function numbersOf(params: URLSearchParams, name: string): number[] {
  const values = emisArray(params, name);
  if (values.some((v) => !/^\d+$/.test(v)))
    throw new EmisError(EMIS_CODES.INVALID_PARAMETER, `Invalid parameter: ${name}`);
  return values.map(Number);
}

function flag(params: URLSearchParams, name: string, fallback: boolean): boolean {
  const v = params.get(name);
  if (v === null || v === '') return fallback;
  return v === '1' || v.toLowerCase() === 'true';
}

export class FakeDocumentsUpstream extends FakeEmisUpstream {
  /** Usage reports received (Usage/report/ and Usage/reportMultiple/), in order. */
  readonly usage: UsageRecord[] = [];

  constructor(opts: FakeDocumentsOptions) {
    super('documents', '/news', opts);
    this.registerDocuments();
  }

  protected override resetState(): void {
    super.resetState();
    this.usage.length = 0;
  }

  private documentView(d: DocumentRecord, includeBody: boolean): Record<string, unknown> {
    const { body, files, ...rest } = d;
    return typed('Document\\Document', {
      ...rest,
      files: files.map((f) => ({ ...f, link: `${this.url}/Search/getFile/?key=${f.key}` })),
      link: `${this.url}/Search/getDocuments/?ids[0]=${d.id}`,
      ...(includeBody ? { body } : {}),
    });
  }

  private registerDocuments(): void {
    const dictionary = (fn: string, type: string, list: readonly object[]) =>
      this.route(`Dictionary/${fn}`, ({ xml }) =>
        this.ok(
          list.map((e) => typed(type, e)),
          xml,
        ),
      );
    dictionary('getCountries', 'Country', EMIS_COUNTRIES);
    dictionary('getLanguages', 'Language', EMIS_LANGUAGES);
    dictionary('getFormats', 'Format', EMIS_FORMATS);
    dictionary('getIndustries', 'Industry', EMIS_INDUSTRIES);
    dictionary('getPublicationTypes', 'PublicationType', EMIS_PUBLICATION_TYPES);
    dictionary('getSourceTypes', 'SourceType', EMIS_SOURCE_TYPES);
    dictionary('getTopics', 'Topic', EMIS_TOPICS);
    this.route('Dictionary/getPublications', ({ params, xml }) => {
      const countries = emisArray(params, 'countries').map((c) => c.toUpperCase());
      const offset = emisInt(params, 'offset', 0);
      const limit = Math.min(emisInt(params, 'limit', 100), 1000);
      const found = emisPublications().filter(
        (p) => countries.length === 0 || countries.includes(p.countryCode),
      );
      return this.ok(
        typed('Document\\PublicationsResult', {
          total: found.length,
          publications: found.slice(offset, offset + limit).map((p) => typed('Document\\Publication', p)),
        }),
        xml,
      );
    });

    this.route('Search/query', ({ params, xml }) => this.ok(this.search(params), xml));
    this.route('Search/getDocuments', ({ params, xml }) => {
      const ids = numbersOf(params, 'ids').concat(numbersOf(params, 'id'));
      if (ids.length === 0) emisRequired(undefined, 'ids');
      const includeBody = flag(params, 'includeBody', true);
      const byId = new Map(documents().map((d) => [d.id, d]));
      const found = ids.flatMap((id) => {
        const d = byId.get(id);
        return d ? [this.documentView(d, includeBody)] : [];
      });
      return this.ok(typed('Document\\ResultList', { total: found.length, documents: found }), xml);
    });
    this.route('Search/getMissingIds', ({ params, xml }) => {
      const ids = numbersOf(params, 'ids').concat(numbersOf(params, 'id'));
      if (ids.length === 0) emisRequired(undefined, 'ids');
      const known = new Set(documents().map((d) => d.id));
      const missing = ids.filter((id) => !known.has(id));
      return this.ok(typed('Document\\MissingDocumentsResult', { total: missing.length, ids: missing }), xml);
    });
    this.route('Search/getFile', ({ params }): FakeReply => {
      const key = emisRequired(params.get('key'), 'key');
      const doc = documents().find((d) => d.files.some((f) => f.key === key));
      const file = doc?.files.find((f) => f.key === key);
      if (!doc || !file) throw new EmisError(EMIS_CODES.NOT_FOUND, `File not found: ${key}`);
      const ext = file.format.toLowerCase();
      return this.fileReply(
        FILE_TYPES[file.format] ?? 'application/octet-stream',
        `${key}.${ext}`,
        file.format === 'PDF' ? '%PDF-1.4\n' : '',
      );
    });
    this.route('Search/findCompany', ({ params, xml }) => {
      const term = (params.get('term') ?? params.get('name') ?? params.get('company') ?? '').toLowerCase();
      const countries = emisArray(params, 'countries').map((c) => c.toUpperCase());
      const offset = emisInt(params, 'offset', 0);
      const limit = Math.min(emisInt(params, 'limit', 25), 100);
      const found = companies().filter(
        (c) =>
          (term === '' || c.companyName.toLowerCase().includes(term)) &&
          (countries.length === 0 || countries.includes(c.countryCode)),
      );
      return this.ok(
        typed('Company\\Result', {
          total: found.length,
          companies: found
            .slice(offset, offset + limit)
            .map((c) =>
              typed('Company', { id: c.companyId, name: c.companyName, countryCode: c.countryCode }),
            ),
        }),
        xml,
      );
    });

    this.route('Usage/report', ({ params, credential, xml }) => {
      const id = emisRequired(params.get('documentId') ?? params.get('id'), 'documentId');
      if (!/^\d+$/.test(id))
        throw new EmisError(EMIS_CODES.INVALID_PARAMETER, 'Invalid parameter: documentId');
      const accessTime = params.get('accessTime') ?? undefined;
      this.usage.push({ documentId: Number(id), accessTime, credential, via: 'report' });
      return this.ok({ reported: 1 }, xml);
    });
    this.route('Usage/reportMultiple', ({ params, credential, xml }) => {
      const raw = emisRequired(params.get('data'), 'data');
      let list: unknown;
      try {
        list = JSON.parse(raw);
      } catch {
        throw new EmisError(EMIS_CODES.INVALID_PARAMETER, 'Invalid parameter: data is not JSON');
      }
      if (!Array.isArray(list))
        throw new EmisError(EMIS_CODES.INVALID_PARAMETER, 'Invalid parameter: data must be a list');
      const entries: UsageRecord[] = [];
      for (const item of list as unknown[]) {
        const rec = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
        const id = Number(rec.documentId ?? rec.id);
        if (!Number.isInteger(id))
          throw new EmisError(EMIS_CODES.INVALID_PARAMETER, 'Invalid parameter: documentId');
        const accessTime = typeof rec.accessTime === 'string' ? rec.accessTime : undefined;
        entries.push({ documentId: id, accessTime, credential, via: 'reportMultiple' });
      }
      this.usage.push(...entries);
      return this.ok({ reported: entries.length }, xml);
    });
  }

  private search(params: URLSearchParams): Record<string, unknown> {
    const countries = emisArray(params, 'countries').map((c) => c.toUpperCase());
    const languages = emisArray(params, 'languages').map((c) => c.toLowerCase());
    const formats = numbersOf(params, 'formats');
    const industries = numbersOf(params, 'industries');
    const topics = numbersOf(params, 'topics');
    const publications = numbersOf(params, 'publications');
    const term = (params.get('term') ?? '').trim();
    const titleOnly = params.get('scope') === 'title';
    const offset = emisInt(params, 'offset', 0);
    const limit = Math.min(emisInt(params, 'limit', 25), 100);
    const order = params.get('order') ?? 'newest';
    if (!ORDERS.includes(order))
      throw new EmisError(EMIS_CODES.INVALID_PARAMETER, 'Invalid parameter: order');
    const start = dateParam(params.get('startDate'));
    const end = dateParam(params.get('endDate'));
    if (Number.isNaN(start) || Number.isNaN(end)) {
      throw new EmisError(EMIS_CODES.INVALID_PARAMETER, 'Invalid parameter: startDate/endDate');
    }
    // Term: words must all appear (AND), or any of them when joined by OR; quotes and operators are ignored.
    const anyOf = / OR /.test(term);
    const words = term
      .toLowerCase()
      .replace(/["()]/g, ' ')
      .split(/\s+/)
      .filter((w) => w !== '' && w !== 'and' && w !== 'or');
    const matchesTerm = (d: DocumentRecord) => {
      if (words.length === 0) return true;
      const text = (titleOnly ? d.title : `${d.title} ${d.body}`).toLowerCase();
      return anyOf ? words.some((w) => text.includes(w)) : words.every((w) => text.includes(w));
    };
    const time = (d: DocumentRecord) => dateParam(d.date) ?? 0;
    const found = documents().filter(
      (d) =>
        (countries.length === 0 || d.countries.some((c) => countries.includes(c.code))) &&
        (languages.length === 0 || languages.includes(d.language.code)) &&
        (formats.length === 0 || formats.includes(d.format)) &&
        (industries.length === 0 || d.industries.some((i) => industries.includes(i.id))) &&
        (topics.length === 0 || d.topics.some((t) => topics.includes(t.id))) &&
        (publications.length === 0 || publications.includes(d.publication.id)) &&
        (start === undefined || time(d) >= start) &&
        (end === undefined || time(d) <= end) &&
        matchesTerm(d),
    );
    const sorted = [...found].sort((a, b) => {
      if (order === 'oldest') return time(a) - time(b) || a.id - b.id;
      if (order === 'id_asc') return a.id - b.id;
      if (order === 'id_desc') return b.id - a.id;
      return time(b) - time(a) || b.id - a.id;
    });
    const pageDocs = sorted.slice(offset, offset + limit);
    const includeBody = flag(params, 'includeBody', false);
    return typed('Document\\Result', {
      total: found.length,
      duplicates: 0,
      results: pageDocs.length,
      search: {
        countries,
        ...(term ? { term } : {}),
        ...(formats.length ? { formats } : {}),
        ...(languages.length ? { languages } : {}),
        offset,
        limit,
        order,
      },
      documents: pageDocs.map((d) => this.documentView(d, includeBody)),
    });
  }
}
