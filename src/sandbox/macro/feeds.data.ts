// Fake CEIC catalogue state: saved filters, feeds and dumps (each fake instance copies its own).
import { COUNTRIES } from '../data/countries.js';
import { createRng, DAY_MS, isoDate, isoDateTime, memo } from '../data/seeded.js';
import { INDICATORS } from './macro-dictionaries.data.js';

export interface MacroFilterRecord {
  id: string;
  name: string;
  description: string;
  created_at: string;
  last_updated_at: string;
  creator_id: string;
  filter_details: { keyword: string; frequency: string[]; geo: string[] };
}

const buildMacroFilters = memo((): MacroFilterRecord[] => {
  const rng = createRng('macro-filters');
  return Array.from({ length: 12 }, (_, i) => {
    const country = COUNTRIES[i % COUNTRIES.length] ?? COUNTRIES[0];
    const indicator = INDICATORS[i % INDICATORS.length] ?? 'CPI';
    const created = Date.UTC(2018, 0, 1) + rng.int(0, 365 * 5) * DAY_MS;
    return {
      id: `FL-${i + 1}`,
      name: `${country.name} ${indicator}`,
      description: `${indicator} series for ${country.name}`,
      created_at: isoDateTime(created),
      last_updated_at: isoDateTime(created + rng.int(1, 400) * DAY_MS),
      creator_id: `U-${4400 + (i % 3)}`,
      filter_details: { keyword: indicator, frequency: [rng.pick(['M', 'Q', 'Y'])], geo: [country.id] },
    };
  });
});

export function macroFilters(): MacroFilterRecord[] {
  return structuredClone(buildMacroFilters());
}

export type FeedStatus = 'ACTIVE' | 'DELETED';

export interface FeedRecord {
  id: string;
  name: string;
  description: string;
  filter_id: string;
  filter_name: string;
  filter_description: string;
  status: FeedStatus;
  user_id: string;
  frequency: number;
  created_at: string;
  feed_updated_at: string;
  language: string;
  consolidation_method: string;
  delivery_method: string;
  delivery_format: string;
  delivery_path: string;
  user_ftp_url: string;
  user_ftp_username: string;
  notification_email: string;
  notification_url: string;
  notification_http_method: string;
  updated_after: string;
  full_dump: boolean;
  metadata_only: boolean;
}

export const FEED_COUNT = 250;

const buildFeeds = memo((): FeedRecord[] => {
  const rng = createRng('macro-feeds');
  const filters = buildMacroFilters();
  const start = Date.UTC(2019, 0, 1);
  const days = (Date.UTC(2024, 11, 31) - start) / DAY_MS;
  return Array.from({ length: FEED_COUNT }, (_, i) => {
    const filter = rng.pick(filters);
    const created = start + rng.int(0, days) * DAY_MS;
    const updated = created + rng.int(1, 120) * DAY_MS + 4 * 3_600_000;
    const ftp = rng.chance(0.5);
    return {
      id: `FD-${2000 + i}`,
      name: `${filter.name} feed ${i + 1}`,
      description: `Scheduled delivery of ${filter.description}`,
      filter_id: filter.id,
      filter_name: filter.name,
      filter_description: filter.description,
      status: rng.chance(0.7) ? 'ACTIVE' : 'DELETED',
      user_id: filter.creator_id,
      frequency: rng.pick([1, 7, 30]),
      created_at: isoDate(created),
      feed_updated_at: isoDateTime(updated),
      language: rng.pick(['en', 'en', 'zh', 'ru']),
      consolidation_method: rng.pick(['none', 'daily']),
      delivery_method: ftp ? 'localftp' : 'api',
      delivery_format: rng.pick(['csv', 'json', 'xlsx']),
      delivery_path: ftp ? `/in/ceic/${i}` : '',
      user_ftp_url: ftp ? 'sftp://ftp.example.org:22' : '',
      user_ftp_username: ftp ? 'atrium' : '',
      notification_email: 'data@example.org',
      notification_url: 'https://hooks.example.org/f',
      notification_http_method: 'POST',
      updated_after: isoDateTime(updated),
      full_dump: rng.chance(0.2),
      metadata_only: rng.chance(0.1),
    };
  });
});

/** A fresh, mutable copy of the 250 generated feeds (each fake instance keeps its own). */
export function macroFeeds(): FeedRecord[] {
  return structuredClone(buildFeeds());
}

export interface MacroDumpRecord {
  id: string;
  name: string;
  feed_id: string;
  status: string;
  progress: number;
  totalSeriesNumber: number;
  collectedSeriesNumber: number;
  downloadLink: string;
  downloadLinkExpiration: string;
  created: string;
}

const buildMacroDumps = memo((): Omit<MacroDumpRecord, 'downloadLink'>[] => {
  const rng = createRng('macro-dumps');
  const feeds = buildFeeds();
  return Array.from({ length: 15 }, (_, i) => {
    const feed = rng.pick(feeds);
    const total = rng.int(10, 3000);
    const created = Date.UTC(2024, 0, 1) + rng.int(0, 360) * DAY_MS;
    return {
      id: `DP-${700 + i}`,
      name: `Dump of ${feed.name}`,
      feed_id: feed.id,
      status: 'COMPLETED',
      progress: 100,
      totalSeriesNumber: total,
      collectedSeriesNumber: total,
      downloadLinkExpiration: isoDateTime(created + 7 * DAY_MS),
      created: isoDateTime(created),
    };
  });
});

export function macroDumps(): Omit<MacroDumpRecord, 'downloadLink'>[] {
  return structuredClone(buildMacroDumps());
}
