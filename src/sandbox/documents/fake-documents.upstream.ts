// Fake EMIS Documents API, called news by the vendor (design notes, upstreams.md §4): base path /news, every documents
// function of the spec plus the Auth functions, JSON and /xml/ variants, usage reports recorded.
import { dateParam, emisArray } from '../fake-params.js';
import {
  EMIS_CODES,
  EmisError,
  credentialParam,
  type FakeEmisOptions,
  FakeEmisUpstream,
  emisInt,
  emisRequired,
} from '../emis/fake-emis.upstream.js';
import type { FakeReply } from '../fake-upstream.js';
import { type EmisClass, typed } from '../emis/emis-classes.js';
import { readUsageReport } from './usage-report.js';
import { companiesMatching } from '../company/company.data.js';
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

const FILE_TYPES: Record<string, string> = {
  PDF: 'application/pdf',
  DOC: 'application/msword',
  XLS: 'application/vnd.ms-excel',
};

const ORDERS = ['newest', 'oldest', 'relevance', 'id_asc', 'id_desc'];

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

  /**
   * A document as the client's Document\\Document, its dictionary entities typed as theirs; its links carry
   * the caller's credential, as the portal's links do (the gateway must sign them or mask it).
   */
  private documentView(d: DocumentRecord, includeBody: boolean, credential: string): Record<string, unknown> {
    const auth = credentialParam(credential, this.token);
    const { body, files, language, countries, companies: cos, topics, industries, ...rest } = d;
    return typed('document', {
      ...rest,
      language: typed('language', language),
      countries: countries.map((c) => typed('country', c)),
      companies: cos.map((c) => typed('company', c)),
      topics: topics.map((t) => typed('topic', t)),
      industries: industries.map((i) => typed('industry', i)),
      publication: typed('publication', d.publication),
      publicationTypes: d.publicationTypes.map((t) => typed('publicationType', t)),
      sourceType: typed('sourceType', d.sourceType),
      files: files.map((f) =>
        typed('file', { ...f, link: `${this.url}/Search/getFile/?key=${f.key}&${auth}` }),
      ),
      link: `${this.url}/Search/getDocuments/?ids[0]=${d.id}&${auth}`,
      ...(includeBody ? { body } : {}),
    });
  }

  private registerDocuments(): void {
    // A list answer tags each item; the client takes the list's class from the first one.
    const dictionary = (fn: string, type: EmisClass | undefined, list: readonly object[]) =>
      this.route(`Dictionary/${fn}`, ({ xml }) =>
        this.ok(
          list.map((e) => (type ? typed(type, e) : e)),
          xml,
        ),
      );
    dictionary('getCountries', 'country', EMIS_COUNTRIES);
    dictionary('getLanguages', 'language', EMIS_LANGUAGES);
    // The client ships no format class: formats go untyped.
    dictionary('getFormats', undefined, EMIS_FORMATS);
    dictionary('getIndustries', 'industry', EMIS_INDUSTRIES);
    dictionary('getPublicationTypes', 'publicationType', EMIS_PUBLICATION_TYPES);
    dictionary('getSourceTypes', 'sourceType', EMIS_SOURCE_TYPES);
    dictionary('getTopics', 'topic', EMIS_TOPICS);
    this.route('Dictionary/getPublications', ({ params, xml }) => {
      const countries = emisArray(params, 'countries').map((c) => c.toUpperCase());
      const offset = emisInt(params, 'offset', 0);
      const limit = Math.min(emisInt(params, 'limit', 100), 1000);
      const found = emisPublications().filter(
        (p) => countries.length === 0 || countries.includes(p.countryCode),
      );
      return this.ok(
        {
          total: found.length,
          publications: found.slice(offset, offset + limit).map((p) => typed('publication', p)),
        },
        xml,
      );
    });

    this.route('Search/query', ({ params, xml, credential }) =>
      this.ok(this.search(params, credential), xml),
    );
    this.route('Search/getDocuments', ({ params, xml, credential }) => {
      const ids = numbersOf(params, 'ids').concat(numbersOf(params, 'id'));
      if (ids.length === 0) emisRequired(undefined, 'ids');
      const includeBody = flag(params, 'includeBody', true);
      const byId = new Map(documents().map((d) => [d.id, d]));
      const found = ids.flatMap((id) => {
        const d = byId.get(id);
        return d ? [this.documentView(d, includeBody, credential)] : [];
      });
      return this.ok(typed('result', { total: found.length, documents: found }), xml);
    });
    this.route('Search/getMissingIds', ({ params, xml }) => {
      const ids = numbersOf(params, 'ids').concat(numbersOf(params, 'id'));
      if (ids.length === 0) emisRequired(undefined, 'ids');
      const known = new Set(documents().map((d) => d.id));
      const missing = ids.filter((id) => !known.has(id));
      return this.ok({ total: missing.length, ids: missing }, xml);
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
      const found = companiesMatching(term, countries);
      return this.ok(
        {
          total: found.length,
          companies: found
            .slice(offset, offset + limit)
            .map((c) =>
              typed('company', { id: c.companyId, name: c.companyName, countryCode: c.countryCode }),
            ),
        },
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
    // The PHP client sends its serialised UsageReport\\Request object; a bare list is accepted too.
    this.route('Usage/reportMultiple', ({ params, credential, xml }) => {
      const entries = readUsageReport(emisRequired(params.get('data'), 'data')).map((u): UsageRecord => ({
        ...u,
        credential,
        via: 'reportMultiple',
      }));
      this.usage.push(...entries);
      return this.ok({ reported: entries.length }, xml);
    });
  }

  private search(params: URLSearchParams, credential: string): Record<string, unknown> {
    const countries = emisArray(params, 'countries').map((c) => c.toUpperCase());
    const languages = emisArray(params, 'languages').map((c) => c.toLowerCase());
    const formats = numbersOf(params, 'formats');
    const industries = numbersOf(params, 'industries');
    const topics = numbersOf(params, 'topics');
    const publications = numbersOf(params, 'publications');
    const companyIds = numbersOf(params, 'companies');
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
        (companyIds.length === 0 || d.companies.some((c) => companyIds.includes(c.id))) &&
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
    return typed('result', {
      total: found.length,
      duplicates: 0,
      results: pageDocs.length,
      search: typed('search', {
        countries,
        ...(term ? { term } : {}),
        ...(formats.length ? { formats } : {}),
        ...(languages.length ? { languages } : {}),
        ...(companyIds.length ? { companies: companyIds } : {}),
        offset,
        limit,
        order,
      }),
      documents: pageDocs.map((d) => this.documentView(d, includeBody, credential)),
    });
  }
}
