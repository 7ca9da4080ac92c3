// Fake CEIC series: metadata and time points, generated per id on demand.
import { COUNTRIES, type IdName } from '../data/countries.js';
import { createRng, DAY_MS, isoDate, round } from '../data/seeded.js';
import { tableOfSeries } from './layout.data.js';
import {
  MACRO_FREQUENCIES,
  MACRO_INDICATORS,
  MACRO_SOURCES,
  MACRO_STATUSES,
  MACRO_UNITS,
} from './macro-dictionaries.data.js';

export interface TimePoint {
  date: string;
  value: number;
  lastUpdateTime: string;
}

export interface SeriesInfo {
  id: string;
  name: string;
  frequency: IdName;
  unit: IdName;
  country: IdName;
  source: IdName;
  status: IdName;
  indicator: IdName;
  /** Series ids ending in 9 are not covered by the sandbox subscription. */
  subscribed: boolean;
  tableId?: string;
}

const SERIES_END = Date.UTC(2024, 11, 31);

export function seriesInfo(id: string): SeriesInfo {
  const rng = createRng(`series:${id}`);
  const num = Number(id);
  const table = Number.isFinite(num) ? tableOfSeries(num) : undefined;
  const country = rng.pick(COUNTRIES);
  const indicator = rng.pick(MACRO_INDICATORS);
  const frequency = rng.pick(MACRO_FREQUENCIES.filter((f) => ['M', 'Q', 'Y'].includes(f.id)));
  const unit = rng.pick(MACRO_UNITS);
  const source = MACRO_SOURCES.find((s) => s.countryId === country.id) ?? { id: 'SRC100', name: 'NSO' };
  return {
    id,
    name: `${table ? table.name.split(':')[0] : indicator.name}: ${country.name}: ${unit.name}`,
    frequency,
    unit,
    country: { id: country.id, name: country.name },
    source: { id: source.id, name: source.name },
    status: MACRO_STATUSES[0] ?? { id: 'T', name: 'Active' },
    indicator: { id: indicator.id, name: indicator.name },
    subscribed: !id.endsWith('9'),
    ...(table ? { tableId: table.id } : {}),
  };
}

function periodEnds(freq: string, count: number): number[] {
  const end = new Date(SERIES_END);
  const months = freq === 'Y' ? 12 : freq === 'Q' ? 3 : 1;
  const out: number[] = [];
  for (let i = count - 1; i >= 0; i--) {
    // Day 0 of the next month is the last day of this one.
    out.push(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() + 1 - i * months, 0));
  }
  return out;
}

/** Ascending time points: 120 monthly, 40 quarterly or 25 yearly, ending 2024-12-31. */
export function seriesTimePoints(info: SeriesInfo): TimePoint[] {
  const rng = createRng(`points:${info.id}`);
  const count = info.frequency.id === 'M' ? 120 : info.frequency.id === 'Q' ? 40 : 25;
  let value = 50 + rng.next() * 100;
  return periodEnds(info.frequency.id, count).map((ms) => {
    value = Math.max(0.1, value * (1 + (rng.next() - 0.45) * 0.04));
    return {
      date: isoDate(ms),
      value: round(value, 2),
      lastUpdateTime: `${isoDate(ms + 12 * DAY_MS)}T08:15:00`,
    };
  });
}
