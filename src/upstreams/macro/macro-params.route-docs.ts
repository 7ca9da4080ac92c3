import type { ParamDoc } from '../../docs/route-docs.types.js';

/** Query, path and body parameters of the macroeconomic interface, as documented (spec §4, upstreams.md §2). */

export const str = (name: string, description: string, extra: Partial<ParamDoc> = {}): ParamDoc => ({
  name,
  description,
  ...extra,
});
export const int = (name: string, description: string, extra: Partial<ParamDoc> = {}): ParamDoc => ({
  name,
  description,
  type: 'integer',
  ...extra,
});
export const bool = (name: string, description: string): ParamDoc => ({ name, description, type: 'boolean' });
export const date = (name: string, description: string): ParamDoc => ({
  name,
  description: `${description} \`YYYY-MM-DD\`, \`YYYYMMDD\` or an ISO datetime.`,
  format: 'date',
});

export const PAGING: ParamDoc[] = [
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
export const SERIES_FILTERS: ParamDoc[] = [
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

export const SEARCH_EXTRAS: ParamDoc[] = [
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

export const SERIES_DATA: ParamDoc[] = [
  date('vintage_revision_date', 'The series as it was on this date (vintages).'),
  int('count', 'Only the latest N time points.', { minimum: 1 }),
  date('start_date', 'First time point.'),
  date('end_date', 'Last time point.'),
  date('updated_after', 'Only time points updated after this moment.'),
  bool('blank_observations', 'Include blank observations.'),
  str('time_points_status', 'Time point status: T (active) or X (deleted).', { enum: ['T', 'X'] }),
  bool('with_historical_extension', 'Extend the series with its historical chain.'),
];

export const SERIES_IDS = {
  id: {
    description: 'Series id, or several comma-separated (sent as `1%2C2`; up to 100 per call).',
    example: '310901',
  },
};

export const FEED_BODY: ParamDoc[] = [
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
