import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A views file with one view, `two-series`: two macro series side by side (`?a=<id>&b=<id>`). */
export function twoSeriesViewsFile(prefix: string): { readonly file: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, 'views.yaml');
  writeFileSync(
    file,
    `views:
  two-series:
    description: Two series side by side.
    params:
      a: { type: integer, required: true, example: 1 }
      b: { type: integer, required: true, example: 2 }
    parts:
      a: { route: macro.series.data, path: { id: '{{ params.a }}' } }
      b: { route: macro.series.data, path: { id: '{{ params.b }}' } }
`,
  );
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A release time as the vendor writes it: UTC, to the second, no zone. */
export const vendorTime = (t: number): string => new Date(t).toISOString().slice(0, 19);

/** The vendor's `/releases/series/{id}` answer with one release window, `from` to `to` (epoch ms). */
export const releaseCalendar = (id: string, from: number, to: number) => ({
  data: [
    {
      entityId: id,
      releases: [
        {
          code: 'RL1',
          releaseDate: vendorTime(from).slice(0, 10),
          from: vendorTime(from),
          to: vendorTime(to),
        },
      ],
    },
  ],
});

/** Gateway settings for a test of release-timed polls: short TTL, interval and quiet time, no margin. */
export const releaseTimedSettings = (o: { ttlMs: number; releaseIntervalMs: number; quietMs: number }) => ({
  ATRIUM_CACHE_TTL_OVERRIDES: `series=${o.ttlMs}ms`,
  ATRIUM_WATCH_MIN_INTERVAL_MS: '50',
  ATRIUM_WATCH_LEASE_MS: '600',
  ATRIUM_WATCH_RELEASE_INTERVAL_MS: String(o.releaseIntervalMs),
  ATRIUM_WATCH_RELEASE_MARGIN_MS: '0',
  ATRIUM_WATCH_RELEASE_QUIET_MS: String(o.quietMs),
});
