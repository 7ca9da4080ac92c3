import type { ParamDoc, UpstreamDocs } from '../../core/ports/docs.port.js';
import { namedSchema } from '../../docs/schema-name.js';
import { MACRO_LANGUAGES } from './macro.constants.js';
import type { MACRO_ROUTES } from './macro.routes.js';

/**
 * OpenAPI annotations of the macroeconomic interface: spec §4.1–4.3 (the two fully specified operations)
 * and what `shared/design/upstreams.md` §2 knows from the vendor's own clients. Keyed by route id; the
 * compiler rejects an id the route table does not have.
 */

type MacroRouteId = (typeof MACRO_ROUTES)[number]['id'];

const str = (name: string, description: string, extra: Partial<ParamDoc> = {}): ParamDoc => ({
  name,
  description,
  ...extra,
});
const int = (name: string, description: string, extra: Partial<ParamDoc> = {}): ParamDoc => ({
  name,
  description,
  type: 'integer',
  ...extra,
});
const bool = (name: string, description: string): ParamDoc => ({ name, description, type: 'boolean' });
const date = (name: string, description: string): ParamDoc => ({
  name,
  description: `${description} \`YYYY-MM-DD\`, \`YYYYMMDD\` or an ISO datetime.`,
  format: 'date',
});

const PAGING: ParamDoc[] = [
  int(
    'offset',
    'Offset from which records are returned; use it to fetch the next set when the limit is reached.',
    {
      minimum: 0,
      default: 0,
    },
  ),
  int('limit', 'Number of records to return.', { minimum: 1, maximum: 100, default: 100 }),
];

/** The series-search filters (`GET /series/search`, also accepted by the layout lists). */
const SERIES_FILTERS: ParamDoc[] = [
  str('keyword', 'Search terms: AND, OR, NOT, `;` and parentheses are understood.', {
    example: 'GDP AND China',
  }),
  str('database', 'Database code(s), comma-separated.', { list: true }),
  str('frequency', 'Frequency code(s): D W M Q H Y Z T.', {
    list: true,
    enum: ['D', 'W', 'M', 'Q', 'H', 'Y', 'Z', 'T'],
  }),
  str('geo', 'Geography id(s), comma-separated.', { list: true }),
  str('source', 'Source id(s), comma-separated.', { list: true }),
  str('unit', 'Unit id(s), comma-separated.', { list: true }),
  str('indicator', 'Indicator id(s), comma-separated.', { list: true }),
  str('region', 'Region id(s), comma-separated.', { list: true }),
  str('status', 'Series status: T active (default), C discontinued, B rebased, D on demand.', {
    list: true,
    enum: ['T', 'C', 'B', 'D'],
  }),
  str('data_source', 'CEIC or USER-IMPORTED.', { enum: ['CEIC', 'USER-IMPORTED'] }),
  str('topic', 'Layout topic id(s).', { list: true }),
  str('section', 'Layout section id(s).', { list: true }),
  str('table', 'Layout table id(s).', { list: true }),
  str('filter_id', 'A saved filter; combined with the other criteria, the result is the intersection.'),
];

const SEARCH_EXTRAS: ParamDoc[] = [
  str('series', 'Series id(s), comma-separated.', { list: true }),
  str('order', 'Sort field.'),
  str('direction', 'Sort direction.', { enum: ['asc', 'desc'] }),
  str('facet', 'Facets to return, comma-separated.', { list: true }),
  date('start_date_before', 'Series starting before this date.'),
  date('end_date_after', 'Series ending after this date.'),
  date('created_after', 'Series created after this date.'),
  date('updated_after', 'Series updated after this date.'),
  date('timepoints_updated_after', 'Series whose time points changed after this date.'),
  ...[
    'strict_keyword_search',
    'subscribed_only',
    'key_only',
    'new_only',
    'name_only',
    'headline_only',
    'forecast_only',
    'with_vintage_enabled_only',
    'with_release_only',
    'with_replacements_only',
    'with_replacements_metadata',
    'with_observations_only',
    'with_continuous_only',
  ].map((n) => bool(n, `Flag \`${n}\`.`)),
];

const SERIES_DATA: ParamDoc[] = [
  date('vintage_revision_date', 'The series as it was on this date (vintages).'),
  int('count', 'Only the latest N time points.', { minimum: 1 }),
  date('start_date', 'First time point.'),
  date('end_date', 'Last time point.'),
  date('updated_after', 'Only time points updated after this moment.'),
  bool('blank_observations', 'Include blank observations.'),
  str('time_points_status', 'Time point status: T (active) or X (deleted).', { enum: ['T', 'X'] }),
  bool('with_historical_extension', 'Extend the series with its historical chain.'),
];

const SERIES_IDS = {
  id: {
    description: 'Series id, or several comma-separated (sent as `1%2C2`; up to 100 per call).',
    example: '310901',
  },
};

const FEED_BODY: ParamDoc[] = [
  str('filter_id', 'The saved filter the feed delivers (required when creating).'),
  str('name', 'Up to 100 characters.'),
  str('description', 'Up to 1000 characters.'),
  str('consolidation', 'Consolidation method (answered as `consolidation_method`).'),
  str('delivery', 'Delivery method, e.g. `localftp` (answered as `delivery_method`).'),
  str('user_ftp_url', '`ftp://` or `sftp://` URL with an optional port (localftp only).'),
  str('user_ftp_path', 'Target directory (localftp only).'),
  str('user_ftp_username', 'FTP user (localftp only).'),
  str('user_ftp_password', 'FTP password (localftp only).'),
  str('notification_email', 'Comma-separated e-mail addresses.'),
  str('notification_url', 'Called when a file is delivered.'),
  str('notification_http_method', 'Method of the notification call.'),
  int('frequency', 'Generation frequency.'),
  bool('full_dump', 'Always deliver every time point (filters of up to 3000 series).'),
];

const FEED_INFORMATION = namedSchema('FeedInformation', {
  type: 'object',
  description: 'A feed subscription (every field optional; snake_case as the vendor sends it).',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    filter_id: { type: 'string' },
    filter_name: { type: 'string' },
    filter_description: { type: 'string' },
    status: { type: 'string', enum: ['ACTIVE', 'DELETED'] },
    user_id: { type: 'string', description: 'The creator.' },
    frequency: { type: 'integer', description: 'Generation frequency.' },
    created_at: { type: 'string' },
    feed_updated_at: { type: 'string' },
    updated_after: { type: 'string', description: 'Start of the next file.' },
    language: { type: 'string' },
    consolidation_method: { type: 'string' },
    delivery_method: { type: 'string' },
    delivery_format: { type: 'string' },
    delivery_path: { type: 'string' },
    user_ftp_url: { type: 'string' },
    user_ftp_username: { type: 'string' },
    notification_email: { type: 'string' },
    notification_url: { type: 'string' },
    notification_http_method: { type: 'string' },
    full_dump: { type: 'boolean' },
    metadata_only: { type: 'boolean' },
  },
});

const FEED_EXAMPLE = {
  id: 'FD-2031',
  name: 'ASEAN CPI weekly',
  description: 'CPI for ASEAN members',
  filter_id: 'FL-88',
  filter_name: 'ASEAN CPI',
  status: 'ACTIVE',
  user_id: 'U-4410',
  frequency: 7,
  created_at: '2024-02-01',
  feed_updated_at: '2024-06-03T04:00:00',
  language: 'en',
  delivery_method: 'localftp',
  delivery_format: 'csv',
  full_dump: false,
  metadata_only: false,
};

const LAYOUT_FULL_METADATA = namedSchema('LayoutFullMetadataItem', {
  type: 'object',
  properties: {
    metadata: {
      type: 'object',
      properties: { id: { type: 'string' }, name: { type: 'string' } },
    },
    ancestors: {
      type: 'object',
      description: 'Ids of the node’s ancestors in the layout tree.',
      properties: {
        database: { type: 'string' },
        topic: { type: 'string' },
        section: { type: 'string' },
        table: { type: 'string' },
      },
    },
  },
});

const RESPONSE_ERROR = namedSchema('MacroResponseError', {
  type: 'object',
  description: 'A per-series problem reported beside data on HTTP 200 (partial success).',
  properties: { status: { type: 'integer' }, code: { type: 'string' }, message: { type: 'string' } },
});

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
