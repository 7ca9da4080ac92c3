import { namedSchema } from '../../docs/schema-name.js';

/** Response schemas and examples of the macroeconomic interface (named ones become OpenAPI components). */

export const FEED_INFORMATION = namedSchema('FeedInformation', {
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

export const FEED_EXAMPLE = {
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

export const LAYOUT_FULL_METADATA = namedSchema('LayoutFullMetadataItem', {
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

export const RESPONSE_ERROR = namedSchema('MacroResponseError', {
  type: 'object',
  description: 'A per-series problem reported beside data on HTTP 200 (partial success).',
  properties: { status: { type: 'integer' }, code: { type: 'string' }, message: { type: 'string' } },
});
