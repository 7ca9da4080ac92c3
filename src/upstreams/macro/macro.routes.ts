import { CACHE_TTL } from '../../proxy/cache-ttl.js';
import type { RouteDefinition } from '../../proxy/pipeline.types.js';
import { FeedsQueryDto } from './dto/feeds-query.dto.js';
import { LayoutTableQueryDto } from './dto/layout-table-query.dto.js';
import { FEEDS_PARAMS } from './macro-params.js';

const { dictionary, layout, series, userList } = CACHE_TTL;

/**
 * Every operation of the macroeconomic interface (spec §4.4), upstream paths unchanged below `/macro`.
 * Writes carry no TTL: they are never cached. The policy test checks this table against the spec.
 */
export const MACRO_ROUTES = [
  // Series
  { id: 'macro.series.search', method: 'GET', path: '/series/search', family: 'series', cacheTtlMs: series },
  { id: 'macro.series.get', method: 'GET', path: '/series/{id}', family: 'series', cacheTtlMs: series },
  {
    id: 'macro.series.continuous',
    method: 'GET',
    path: '/series/{id}/continuous',
    family: 'series',
    cacheTtlMs: series,
  },
  {
    id: 'macro.series.continuous.data',
    method: 'GET',
    path: '/series/{id}/continuous/{chain_id}/data',
    family: 'series',
    cacheTtlMs: series,
  },
  { id: 'macro.series.data', method: 'GET', path: '/series/{id}/data', family: 'series', cacheTtlMs: series },
  {
    id: 'macro.series.metadata',
    method: 'GET',
    path: '/series/{id}/metadata',
    family: 'series',
    cacheTtlMs: series,
  },
  {
    id: 'macro.series.statistics',
    method: 'GET',
    path: '/series/{id}/statistics',
    family: 'series',
    cacheTtlMs: series,
  },
  { id: 'macro.series.visual', method: 'GET', path: '/series/{id}/visual', family: 'series', file: true },

  // User-defined series
  {
    id: 'macro.userdefined.list',
    method: 'GET',
    path: '/userdefined/series',
    family: 'userdefined',
    cacheTtlMs: userList,
  },
  {
    id: 'macro.userdefined.get',
    method: 'GET',
    path: '/userdefined/series/{id}',
    family: 'userdefined',
    cacheTtlMs: userList,
  },
  {
    id: 'macro.userdefined.data',
    method: 'GET',
    path: '/userdefined/series/{id}/data',
    family: 'userdefined',
    cacheTtlMs: userList,
  },
  { id: 'macro.userdefined.create', method: 'POST', path: '/userdefined/series', family: 'userdefined' },
  { id: 'macro.userdefined.clone', method: 'POST', path: '/userdefined/series/clone', family: 'userdefined' },
  {
    id: 'macro.userdefined.timepoints.create',
    method: 'POST',
    path: '/userdefined/series/{id}/timepoints',
    family: 'userdefined',
  },
  {
    id: 'macro.userdefined.update',
    method: 'PATCH',
    path: '/userdefined/series/{id}',
    family: 'userdefined',
  },
  {
    id: 'macro.userdefined.timepoint.update',
    method: 'PATCH',
    path: '/userdefined/series/{id}/timepoints/{date}',
    family: 'userdefined',
  },
  {
    id: 'macro.userdefined.delete',
    method: 'DELETE',
    path: '/userdefined/series/{id}',
    family: 'userdefined',
  },
  {
    id: 'macro.userdefined.timepoints.delete',
    method: 'DELETE',
    path: '/userdefined/series/{id}/timepoints',
    family: 'userdefined',
  },
  {
    id: 'macro.userdefined.timepoint.delete',
    method: 'DELETE',
    path: '/userdefined/series/{id}/timepoints/{date}',
    family: 'userdefined',
  },

  // Insights
  { id: 'macro.insights.list', method: 'GET', path: '/insights', family: 'insights', cacheTtlMs: series },
  {
    id: 'macro.insights.categories',
    method: 'GET',
    path: '/insights/categories',
    family: 'insights',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.insights.categories.gallery',
    method: 'GET',
    path: '/insights/categories/gallery',
    family: 'insights',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.insights.search',
    method: 'GET',
    path: '/insights/search',
    family: 'insights',
    cacheTtlMs: series,
  },
  {
    id: 'macro.insights.series.get',
    method: 'GET',
    path: '/insights/series/{series_id}',
    family: 'insights',
    cacheTtlMs: series,
  },
  {
    id: 'macro.insights.series.data',
    method: 'GET',
    path: '/insights/series/{series_id}/data',
    family: 'insights',
    cacheTtlMs: series,
  },
  {
    id: 'macro.insights.series.metadata',
    method: 'GET',
    path: '/insights/series/{series_id}/metadata',
    family: 'insights',
    cacheTtlMs: series,
  },
  { id: 'macro.insights.get', method: 'GET', path: '/insights/{id}', family: 'insights', cacheTtlMs: series },
  // Download answers carry an expiring link: cached briefly only.
  {
    id: 'macro.insights.download',
    method: 'GET',
    path: '/insights/{id}/download/{file_format}',
    family: 'insights',
    cacheTtlMs: userList,
  },
  {
    id: 'macro.insights.insight.series',
    method: 'GET',
    path: '/insights/{id}/series',
    family: 'insights',
    cacheTtlMs: series,
  },
  {
    id: 'macro.insights.insight.series.data',
    method: 'GET',
    path: '/insights/{id}/series/data',
    family: 'insights',
    cacheTtlMs: series,
  },
  {
    id: 'macro.insights.insight.series.metadata',
    method: 'GET',
    path: '/insights/{id}/series/metadata',
    family: 'insights',
    cacheTtlMs: series,
  },

  // Layout
  {
    id: 'macro.layout.databases',
    method: 'GET',
    path: '/layout/databases',
    family: 'layout',
    cacheTtlMs: layout,
  },
  {
    id: 'macro.layout.database.topics',
    method: 'GET',
    path: '/layout/databases/{id}/topics',
    family: 'layout',
    cacheTtlMs: layout,
  },
  {
    id: 'macro.layout.section',
    method: 'GET',
    path: '/layout/sections/{id}',
    family: 'layout',
    cacheTtlMs: layout,
  },
  {
    id: 'macro.layout.section.tables',
    method: 'GET',
    path: '/layout/sections/{id}/tables',
    family: 'layout',
    cacheTtlMs: layout,
  },
  {
    id: 'macro.layout.table',
    method: 'GET',
    path: '/layout/tables/{id}',
    family: 'layout',
    cacheTtlMs: layout,
    query: LayoutTableQueryDto,
  },
  {
    id: 'macro.layout.table.series',
    method: 'GET',
    path: '/layout/tables/{id}/series',
    family: 'layout',
    cacheTtlMs: series,
  },
  {
    id: 'macro.layout.topic',
    method: 'GET',
    path: '/layout/topics/{id}',
    family: 'layout',
    cacheTtlMs: layout,
  },
  {
    id: 'macro.layout.topic.sections',
    method: 'GET',
    path: '/layout/topics/{id}/sections',
    family: 'layout',
    cacheTtlMs: layout,
  },
  {
    id: 'macro.layout.footnote',
    method: 'GET',
    path: '/layout/{node_code}/footnote',
    family: 'layout',
    cacheTtlMs: layout,
  },

  // Dictionary
  {
    id: 'macro.dictionary.all',
    method: 'GET',
    path: '/dictionary',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.classifications',
    method: 'GET',
    path: '/dictionary/classifications',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.classification.indicators',
    method: 'GET',
    path: '/dictionary/classifications/{id}/indicators',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.countries',
    method: 'GET',
    path: '/dictionary/countries',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.country.sources',
    method: 'GET',
    path: '/dictionary/countries/{id}/sources',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.frequencies',
    method: 'GET',
    path: '/dictionary/frequencies',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.geo',
    method: 'GET',
    path: '/dictionary/geo',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.indicators',
    method: 'GET',
    path: '/dictionary/indicators',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.layouts',
    method: 'GET',
    path: '/dictionary/layouts',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.regions',
    method: 'GET',
    path: '/dictionary/regions',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.release_statuses',
    method: 'GET',
    path: '/dictionary/release_statuses',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.release_types',
    method: 'GET',
    path: '/dictionary/release_types',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.sources',
    method: 'GET',
    path: '/dictionary/sources',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.statuses',
    method: 'GET',
    path: '/dictionary/statuses',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'macro.dictionary.units',
    method: 'GET',
    path: '/dictionary/units',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },

  // Filters
  { id: 'macro.filters.list', method: 'GET', path: '/filters', family: 'filters', cacheTtlMs: userList },
  { id: 'macro.filters.get', method: 'GET', path: '/filters/{id}', family: 'filters', cacheTtlMs: userList },
  { id: 'macro.filters.create', method: 'POST', path: '/filters', family: 'filters' },
  { id: 'macro.filters.update', method: 'PATCH', path: '/filters/{id}', family: 'filters' },
  { id: 'macro.filters.delete', method: 'DELETE', path: '/filters/{id}', family: 'filters' },

  // Dumps
  { id: 'macro.dumps.list', method: 'GET', path: '/dumps', family: 'dumps', cacheTtlMs: userList },
  { id: 'macro.dumps.get', method: 'GET', path: '/dumps/{id}', family: 'dumps', cacheTtlMs: userList },
  { id: 'macro.dumps.create', method: 'POST', path: '/dumps', family: 'dumps' },
  { id: 'macro.dumps.delete', method: 'DELETE', path: '/dumps/{id}', family: 'dumps' },

  // Feeds
  {
    id: 'macro.feeds.list',
    method: 'GET',
    path: '/feeds',
    family: 'feeds',
    cacheTtlMs: userList,
    query: FeedsQueryDto,
    params: FEEDS_PARAMS,
  },
  { id: 'macro.feeds.get', method: 'GET', path: '/feeds/{id}', family: 'feeds', cacheTtlMs: userList },
  { id: 'macro.feeds.create', method: 'POST', path: '/feeds', family: 'feeds' },
  { id: 'macro.feeds.update', method: 'PATCH', path: '/feeds/{id}', family: 'feeds' },
  { id: 'macro.feeds.delete', method: 'DELETE', path: '/feeds/{id}', family: 'feeds' },

  // Releases
  { id: 'macro.releases.list', method: 'GET', path: '/releases', family: 'releases', cacheTtlMs: series },
  {
    id: 'macro.releases.series',
    method: 'GET',
    path: '/releases/series/{id}',
    family: 'releases',
    cacheTtlMs: series,
  },
  {
    id: 'macro.releases.code.series',
    method: 'GET',
    path: '/releases/{code}/series',
    family: 'releases',
    cacheTtlMs: series,
  },
] as const satisfies readonly RouteDefinition[];
