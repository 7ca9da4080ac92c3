// Per-instance mutable state of the fake CEIC (feeds, filters, dumps, user-defined series): built on
// first use so start-up stays cheap, and rebuilt after a reset.
import type { MacroDumpRecord, FeedRecord, MacroFilterRecord } from './feeds.data.js';
import { macroDumps, macroFeeds, macroFilters } from './feeds.data.js';
import { seriesInfo, seriesTimePoints } from './series.data.js';

export interface UserSeries {
  id: string;
  name: string;
  description: string;
  frequency: string;
  unit: string;
  created_at: string;
  updated_at: string;
  clonedFrom?: string;
  timePoints: Map<string, number>;
}

export class MacroState {
  feeds: FeedRecord[] = [];
  filters: MacroFilterRecord[] = [];
  dumps: Omit<MacroDumpRecord, 'downloadLink'>[] = [];
  userSeries = new Map<string, UserSeries>();
  private seq = 0;
  private loaded = false;

  /** Forgets every change: the next load() starts from the generated data again. */
  reset(): void {
    this.loaded = false;
  }

  load(): void {
    if (this.loaded) return;
    this.loaded = true;
    this.feeds = macroFeeds();
    this.filters = macroFilters();
    this.dumps = macroDumps();
    this.seq = 0;
    this.userSeries = new Map();
    for (let i = 1; i <= 3; i++) {
      const info = seriesInfo(String(900000 + i));
      const points = new Map(
        seriesTimePoints(info)
          .slice(-12)
          .map((p) => [p.date, p.value]),
      );
      this.userSeries.set(`UD-${i}`, {
        id: `UD-${i}`,
        name: `My ${info.name}`,
        description: 'User-defined sandbox series',
        frequency: info.frequency.id,
        unit: info.unit.name,
        created_at: '2024-01-15T10:00:00',
        updated_at: '2024-06-01T10:00:00',
        timePoints: points,
      });
    }
  }

  nextId(prefix: string): string {
    this.seq++;
    return `${prefix}-${9000 + this.seq}`;
  }
}
