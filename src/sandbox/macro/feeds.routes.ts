// Fake CEIC feeds (per-instance state): list filters, create, patch and delete.
import type { FakeRouter } from '../fake-router.js';
import { type MacroEnv, type MacroHandler, bad, notFound, ok } from './macro-errors.js';
import { bool, type Fields, int, listParam, readFields, str } from '../fake-params.js';
import { isoDate, isoDateTime } from '../data/seeded.js';
import type { FeedRecord } from './feeds.data.js';
import { listFilter } from './macro-views.js';

export function feedRoutes(r: FakeRouter<MacroHandler>, env: MacroEnv): void {
  const find = (id: string | undefined) => env.state.feeds.find((f) => f.id === id);
  /** Applies POST/PATCH form fields; returns an error message or undefined. */
  const apply = (feed: FeedRecord, fields: Fields, patch: boolean): string | undefined => {
    const name = str(fields.name);
    const description = str(fields.description);
    if (name !== undefined && name.length > 100) return 'name must be at most 100 characters';
    if (description !== undefined && description.length > 1000)
      return 'description must be at most 1000 characters';
    const filterId = str(fields.filter_id);
    if (filterId !== undefined) {
      const filter = env.state.filters.find((f) => f.id === filterId);
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
    feed.feed_updated_at = isoDateTime(env.now());
    return undefined;
  };

  r.add('GET', '/feeds', ({ req }) => {
    const filterIds = listParam(req.query, 'filter_id');
    const result = listFilter(
      req.query,
      env.state.feeds,
      (f) => f.created_at,
      (f) => filterIds.length === 0 || filterIds.includes(f.filter_id),
    );
    return typeof result === 'string' ? bad(result) : ok({ data: result });
  });
  r.add('POST', '/feeds', ({ req }) => {
    const parsed = readFields(req);
    if ('error' in parsed) return bad(parsed.error);
    if (!str(parsed.fields.filter_id)) return bad('filter_id is required');
    const now = env.now();
    const feed: FeedRecord = {
      id: env.state.nextId('FD'),
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
    env.state.feeds.push(feed);
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
    feed.feed_updated_at = isoDateTime(env.now());
    return ok(feed);
  });
}
