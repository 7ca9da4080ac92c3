import type { ReleaseWindow, WatchSchedule } from '../../proxy/upstream-definition.js';
import type { MACRO_ROUTES } from './macro.routes.js';

type MacroRouteId = (typeof MACRO_ROUTES)[number]['id'];

/** The routes of one series whose figures change when the vendor releases them (`{id}` is the series). */
const SERIES_ROUTES: ReadonlySet<string> = new Set<MacroRouteId>([
  'macro.series.get',
  'macro.series.data',
  'macro.series.metadata',
  'macro.series.statistics',
  'macro.series.continuous',
  'macro.series.continuous.data',
]);

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
 * watch of that series polls often around each release window and rarely between. Series lists
 * (`{id}` = `1,2,3`) and every other route keep their TTL.
 */
export const macroWatchSchedule: WatchSchedule = {
  pathOf(route, params) {
    const id = params.id;
    if (!SERIES_ROUTES.has(route.id) || !id || id.includes(',')) return undefined;
    return `/macro/releases/series/${encodeURIComponent(id)}`;
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
