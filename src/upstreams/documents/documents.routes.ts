import { CACHE_TTL } from '../../proxy/cache-ttl.js';
import type { RouteDefinition } from '../../proxy/pipeline.types.js';

const { dictionary, layout, series } = CACHE_TTL;

/**
 * Every operation of the document interface (spec §4.4), paths with the vendor's casing and trailing slash
 * below `/documents` (and `/news`). `Search/getFile/` answers a file (streamed, never cached); the usage
 * reports are GETs with a side effect (never cached, coalesced or retried). `Auth/*` is answered by the
 * gateway itself (emis-auth.controller.ts) and is not an upstream route.
 */
export const DOCUMENTS_ROUTES = [
  // Dictionary
  {
    id: 'documents.dictionary.countries',
    method: 'GET',
    path: '/Dictionary/getCountries/',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'documents.dictionary.languages',
    method: 'GET',
    path: '/Dictionary/getLanguages/',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'documents.dictionary.formats',
    method: 'GET',
    path: '/Dictionary/getFormats/',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'documents.dictionary.industries',
    method: 'GET',
    path: '/Dictionary/getIndustries/',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'documents.dictionary.publication_types',
    method: 'GET',
    path: '/Dictionary/getPublicationTypes/',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'documents.dictionary.source_types',
    method: 'GET',
    path: '/Dictionary/getSourceTypes/',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'documents.dictionary.topics',
    method: 'GET',
    path: '/Dictionary/getTopics/',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'documents.dictionary.publications',
    method: 'GET',
    path: '/Dictionary/getPublications/',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },

  // Search
  {
    id: 'documents.search.query',
    method: 'GET',
    path: '/Search/query/',
    family: 'search',
    cacheTtlMs: series,
  },
  // A published document changes rarely.
  {
    id: 'documents.search.documents',
    method: 'GET',
    path: '/Search/getDocuments/',
    family: 'documents',
    cacheTtlMs: layout,
  },
  {
    id: 'documents.search.missing_ids',
    method: 'GET',
    path: '/Search/getMissingIds/',
    family: 'documents',
    cacheTtlMs: series,
  },
  { id: 'documents.search.file', method: 'GET', path: '/Search/getFile/', family: 'files', file: true },
  {
    id: 'documents.search.find_company',
    method: 'GET',
    path: '/Search/findCompany/',
    family: 'search',
    cacheTtlMs: series,
  },

  // Usage: each call records that a document was read.
  { id: 'documents.usage.report', method: 'GET', path: '/Usage/report/', family: 'usage', sideEffect: true },
  {
    id: 'documents.usage.report_multiple',
    method: 'GET',
    path: '/Usage/reportMultiple/',
    family: 'usage',
    sideEffect: true,
  },
] as const satisfies readonly RouteDefinition[];
