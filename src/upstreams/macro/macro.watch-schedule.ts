import type { ReleaseWindow, WatchSchedule } from '../../proxy/upstream-definition.js';
import type { MACRO_ROUTES } from './macro.routes.js';

type MacroRouteId = (typeof MACRO_ROUTES)[number]['id'];

/**
 * The routes of series whose answers change when the vendor releases them (`{id}` is the series, or several
 * comma-separated), and the release calendar of a series itself: a release's status moves when it happens.
 */
const SERIES_ROUTES: ReadonlySet<string> = new Set<MacroRouteId>([
  'macro.series.get',
  'macro.series.data',
  'macro.series.metadata',
  'macro.series.statistics',
  'macro.series.continuous',
  'macro.series.continuous.data',
  'macro.releases.series',
]);
/** A longer series list keeps its TTL: reading a calendar per series would cost more than it saves. */
const MAX_CALENDARS = 20;

const DAY_MS = 86_400_000;

/**
 * A release time as the vendor writes it: ISO 8601, read as UTC when it names no zone (`2024-01-05T09:00:00`,
 * the spec shows none); a bare date is that whole day.
 */
function timeOf(v: unknown): number | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  const zoned = /(?:Z|[+-]\d\d:?\d\d)$/i.test(v) || !v.includes('T') ? v : `${v}Z`;
  const t = Date.parse(zoned);
  return Number.isFinite(t) ? t : undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The macro interface's release calendar: `GET /releases/series/{id}` answers
 * `{"data":[{"entityId","releases":[{"releaseDate","from","to","releaseStatus",…}]}]}` for a series, so a
 * watch of that series polls often around each release window and rarely between. A series list
 * (`{id}` = `1,2,3`) reads each series' calendar (one call each: the interface does not say that this call
 * takes a list) and polls around a release of any of them; a list of more than 20 series, and every other
 * route, keep their TTL.
 */
export const macroWatchSchedule: WatchSchedule = {
  pathsOf(route, params) {
    if (!SERIES_ROUTES.has(route.id) || !params.id) return [];
    const ids = [...new Set(params.id.split(',').map((id) => id.trim()))];
    if (ids.length > MAX_CALENDARS || ids.some((id) => id === '')) return [];
    return ids.map((id) => `/macro/releases/series/${encodeURIComponent(id)}`);
  },
  windowsOf(body) {
    const out: ReleaseWindow[] = [];
    const data = isRecord(body) && Array.isArray(body.data) ? body.data : [];
    for (const entry of data) {
      if (!isRecord(entry) || !Array.isArray(entry.releases)) continue;
      for (const rel of entry.releases) {
        if (!isRecord(rel)) continue;
        const day = timeOf(rel.releaseDate);
        const from = timeOf(rel.from) ?? day;
        const to = timeOf(rel.to) ?? (rel.from === undefined && day !== undefined ? day + DAY_MS : from);
        if (from !== undefined && to !== undefined) out.push({ from, to: Math.max(from, to) });
      }
    }
    return out;
  },
};
