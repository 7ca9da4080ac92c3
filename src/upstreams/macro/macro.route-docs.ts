import type { UpstreamDocs } from '../../docs/route-docs.types.js';
import {
  bool,
  date,
  FEED_BODY,
  int,
  PAGING,
  SEARCH_EXTRAS,
  SERIES_DATA,
  SERIES_FILTERS,
  SERIES_IDS,
  str,
} from './macro-params.route-docs.js';
import {
  FEED_EXAMPLE,
  FEED_INFORMATION,
  LAYOUT_FULL_METADATA,
  RESPONSE_ERROR,
} from './macro-schemas.route-docs.js';
import { MACRO_LANGUAGES } from './macro.constants.js';
import type { MACRO_ROUTES } from './macro.routes.js';

/**
 * OpenAPI annotations of the macroeconomic interface: spec §4.1–4.3 (the two fully specified operations)
 * and what `shared/design/upstreams.md` §2 knows from the vendor's own clients. Keyed by route id; the
 * compiler rejects an id the route table does not have.
 */

type MacroRouteId = (typeof MACRO_ROUTES)[number]['id'];

export const MACRO_DOCS: UpstreamDocs<MacroRouteId> = {
  description:
    'The macroeconomic data interface (CEIC v2) under `/macro`, with the vendor’s paths unchanged: point the CEIC client’s `Configuration.host` at `http://<gateway>/macro` and use a gateway key as its token. Answers are `{"data": …}` as the vendor sends them.',
  common: [
    str(
      'lang',
      'Language of returned data; English when no translation exists. Wins over `Accept-Language`.',
      {
        enum: [...MACRO_LANGUAGES],
        default: 'en',
      },
    ),
    str('format', 'Response format; wins over `Accept`. Anything else is a 415.', {
      enum: ['json', 'xml'],
      default: 'json',
    }),
    bool('with_model_information', 'When true, the response also carries the model names.'),
  ],
  pathParams: {
    id: { description: 'Identifier of the entity (a single path segment).' },
  },
  routes: {
    'macro.feeds.list': {
      summary: 'List feed subscriptions',
      description:
        'Lists all feed subscriptions the calling user has set (spec §4.2). The list carries no total.',
      query: [
        ...PAGING,
        date('created_after', 'Only entries created after this date.'),
        date('created_before', 'Only entries created before this date.'),
        str(
          'filter_id',
          'A filter that defines the subset of data searched; combined with other criteria, the result is the intersection.',
        ),
        str('created_order', 'Order of entries by creation.', { enum: ['ASC', 'DESC'], default: 'ASC' }),
        str('status', 'Feed statuses to include: repeated or comma-separated.', {
          list: true,
          enum: ['ACTIVE', 'DELETED'],
          example: 'ACTIVE,DELETED',
        }),
      ],
      response: {
        description: 'FeedsResult: the feed subscriptions.',
        name: 'FeedsResult',
        schema: { type: 'object', properties: { data: { type: 'array', items: FEED_INFORMATION } } },
        example: { data: [FEED_EXAMPLE] },
      },
    },
    'macro.layout.table': {
      summary: 'Layout table metadata and ancestors',
      description:
        'Metadata of the layout node of type table with the given id, with the ids of its ancestors (spec §4.3).',
      pathParams: { id: { description: 'Node id of the table.', example: 'TB1207' } },
      response: {
        description: 'LayoutFullMetadataResult.',
        name: 'LayoutFullMetadataResult',
        schema: { type: 'object', properties: { data: { type: 'array', items: LAYOUT_FULL_METADATA } } },
        example: {
          data: [
            {
              metadata: { id: 'TB1207', name: 'Consumer Price Index: 2018=100' },
              ancestors: { database: 'WORLD', topic: 'TP301', section: 'SC3310', table: 'TB1207' },
            },
          ],
        },
      },
    },
    'macro.layout.topic': {
      summary: 'Layout topic metadata and ancestors',
      pathParams: { id: { description: 'Node id of the topic.', example: 'TP301' } },
    },
    'macro.layout.section': {
      summary: 'Layout section metadata and ancestors',
      pathParams: { id: { description: 'Node id of the section.', example: 'SC3310' } },
    },
    'macro.layout.databases': { summary: 'List layout databases', query: SERIES_FILTERS },
    'macro.layout.database.topics': { summary: 'Topics of a database', query: SERIES_FILTERS },
    'macro.layout.topic.sections': { summary: 'Sections of a topic', query: SERIES_FILTERS },
    'macro.layout.section.tables': { summary: 'Tables of a section', query: SERIES_FILTERS },
    'macro.layout.table.series': { summary: 'Series of a layout table', query: SERIES_FILTERS },
    'macro.layout.footnote': {
      summary: 'Footnote of a layout node',
      pathParams: { node_code: { description: 'Code of the layout node.' } },
    },
    'macro.series.search': {
      summary: 'Search series',
      query: [...PAGING, ...SERIES_FILTERS, ...SEARCH_EXTRAS],
      response: {
        description: 'SearchSeriesResult: `{data: {total, items, facets}}`.',
        name: 'SearchSeriesResult',
        schema: {
          type: 'object',
          properties: {
            data: {
              type: 'object',
              properties: {
                total: { type: 'integer' },
                items: { type: 'array', items: { type: 'object' } },
                facets: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: {
                      id: { type: 'string' },
                      items: {
                        type: 'array',
                        items: {
                          type: 'object',
                          properties: { id: { type: 'string' }, total: { type: 'integer' } },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
    'macro.series.get': {
      summary: 'Series with data and metadata',
      pathParams: SERIES_IDS,
      query: SERIES_DATA,
    },
    'macro.series.data': {
      summary: 'Time points of series',
      pathParams: SERIES_IDS,
      query: SERIES_DATA,
      response: {
        description:
          'SeriesResult. Missing or unsubscribed series come back in `errors` beside `data`, still with HTTP 200.',
        name: 'SeriesDataResult',
        schema: {
          type: 'object',
          properties: {
            data: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  entityId: { type: 'string' },
                  timePoints: {
                    type: 'array',
                    items: {
                      type: 'object',
                      properties: {
                        date: { type: 'string' },
                        value: { type: 'number', nullable: true },
                        lastUpdateTime: { type: 'string' },
                      },
                    },
                  },
                },
              },
            },
            errors: { type: 'array', items: RESPONSE_ERROR },
          },
        },
        example: {
          data: [
            {
              entityId: '310901',
              timePoints: [{ date: '2024-03-31', value: 101.4, lastUpdateTime: '2024-04-12T08:15:00' }],
            },
          ],
          errors: [{ code: 'UNSUBSCRIBED_SERIES', message: 'series 310902 is not subscribed' }],
        },
      },
    },
    'macro.series.metadata': {
      summary: 'Metadata of series',
      pathParams: SERIES_IDS,
      query: [date('vintage_revision_date', 'The metadata as it was on this date.')],
    },
    'macro.series.statistics': { summary: 'Statistics of series', pathParams: SERIES_IDS },
    'macro.series.continuous': { summary: 'Continuous chains of a series', pathParams: SERIES_IDS },
    'macro.series.continuous.data': {
      summary: 'Data of a continuous chain',
      pathParams: { ...SERIES_IDS, chain_id: { description: 'Id of the continuous chain.' } },
    },
    'macro.series.visual': {
      summary: 'Chart image of a series (PNG or JPEG)',
      pathParams: SERIES_IDS,
    },
    'macro.insights.search': {
      summary: 'Search insights',
      query: [
        str('group', 'Which insights to search.', { default: 'my' }),
        str('keyword', 'Search terms.'),
        ...PAGING,
        str('order', 'Sort field.'),
        str('direction', 'Sort direction.', { enum: ['asc', 'desc'] }),
        str('tags', 'Tags, comma-separated.', { list: true }),
        str('categories', 'Categories, comma-separated.', { list: true }),
      ],
    },
    'macro.insights.download': {
      summary: 'Download link of an insight',
      description:
        'Answers with a `downloadLink` and its expiry, not the file; a link carrying the vendor key is replaced by a gateway-signed link.',
      pathParams: {
        file_format: { description: 'File format of the export, e.g. `xlsx`.', example: 'xlsx' },
      },
      query: [
        bool('ignore_cache', 'Build the export afresh.'),
        bool('adjust_columns', 'Adjust column widths.'),
        date('start_date', 'First time point.'),
        date('end_date', 'Last time point.'),
        int('count', 'Only the latest N time points.'),
        bool('blank_observations', 'Include blank observations.'),
        str('orientation', 'Orientation of the table.'),
        str('order', 'Order of time points.'),
        int('decimal_places', 'Decimal places.'),
        str('date_format', 'Date format.'),
      ],
    },
    'macro.insights.series.get': {
      summary: 'Insight series',
      pathParams: { series_id: { description: 'Insight series id (may contain `-`).' } },
    },
    'macro.insights.series.data': {
      summary: 'Insight series data',
      pathParams: { series_id: { description: 'Insight series id (may contain `-`).' } },
    },
    'macro.insights.series.metadata': {
      summary: 'Insight series metadata',
      pathParams: { series_id: { description: 'Insight series id (may contain `-`).' } },
    },
    'macro.dumps.list': {
      summary: 'List dumps',
      query: [
        ...PAGING,
        str('feed_id', 'Only dumps of this feed.'),
        str('status', 'Dump statuses, comma-separated.', { list: true }),
      ],
    },
    'macro.releases.list': {
      summary: 'Release schedule',
      query: [
        ...PAGING,
        ...SERIES_FILTERS,
        date('release_date_from', 'Releases from this date.'),
        date('release_date_to', 'Releases up to this date.'),
        str('release_status', 'Release statuses, comma-separated.', { list: true }),
      ],
    },
    'macro.releases.code.series': {
      summary: 'Series of a release',
      pathParams: { code: { description: 'Release code.' } },
    },
    'macro.feeds.get': { summary: 'A feed subscription' },
    'macro.feeds.create': {
      summary: 'Create a feed subscription',
      body: {
        contentTypes: ['application/x-www-form-urlencoded', 'application/json'],
        description: 'The feed, form-urlencoded as the vendor documents it (JSON is forwarded too).',
        fields: FEED_BODY.map((f) => (f.name === 'filter_id' ? { ...f, required: true } : f)),
        example: { filter_id: 'FL-88', name: 'ASEAN CPI weekly', full_dump: false },
      },
      response: {
        description: '`{"data": FeedInformation}`.',
        schema: { type: 'object', properties: { data: FEED_INFORMATION } },
      },
    },
    'macro.feeds.update': {
      summary: 'Change a feed subscription',
      body: {
        contentTypes: ['application/x-www-form-urlencoded', 'application/json'],
        description:
          'The fields to change, form-urlencoded as the vendor documents it (JSON is forwarded too).',
        fields: [...FEED_BODY, str('status', 'ACTIVE or DELETED.', { enum: ['ACTIVE', 'DELETED'] })],
        example: { name: 'renamed' },
      },
      response: {
        description: 'The feed (the vendor documents a bare FeedInformation here).',
        schema: FEED_INFORMATION,
      },
    },
    'macro.feeds.delete': { summary: 'Delete a feed subscription' },
    'macro.filters.list': { summary: 'List saved filters' },
    'macro.filters.get': { summary: 'A saved filter' },
    'macro.filters.create': { summary: 'Create a saved filter' },
    'macro.filters.update': { summary: 'Change a saved filter' },
    'macro.filters.delete': { summary: 'Delete a saved filter' },
    'macro.dictionary.all': { summary: 'Every dictionary' },
    'macro.userdefined.timepoint.update': {
      pathParams: { date: { description: 'Date of the time point, `YYYY-MM-DD`.', example: '2024-03-31' } },
    },
    'macro.userdefined.timepoint.delete': {
      pathParams: { date: { description: 'Date of the time point, `YYYY-MM-DD`.', example: '2024-03-31' } },
    },
  },
};
