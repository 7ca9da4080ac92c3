// Fake CEIC insights and data releases.
import { COUNTRIES, type IdName } from '../data/countries.js';
import { createRng, DAY_MS, isoDate, isoDateTime, memo } from '../data/seeded.js';
import { INDICATORS, MACRO_RELEASE_TYPES } from './macro-dictionaries.data.js';

export interface InsightRecord {
  id: string;
  name: string;
  description: string;
  categoryId: string;
  tags: string[];
  created: string;
  seriesIds: string[];
}

export const INSIGHT_CATEGORIES: readonly IdName[] = [
  { id: 'IC1', name: 'Economy' },
  { id: 'IC2', name: 'Markets' },
  { id: 'IC3', name: 'Trade' },
];

export const insights = memo((): InsightRecord[] => {
  const rng = createRng('insights');
  return Array.from({ length: 12 }, (_, i) => {
    const country = COUNTRIES[i % COUNTRIES.length] ?? COUNTRIES[0];
    const id = String(5001 + i);
    return {
      id,
      name: `${country.name} economic monitor`,
      description: `Key indicators for ${country.name}`,
      categoryId: INSIGHT_CATEGORIES[i % INSIGHT_CATEGORIES.length]?.id ?? 'IC1',
      tags: [country.id.toLowerCase(), rng.pick(['gdp', 'cpi', 'trade'])],
      created: isoDateTime(Date.UTC(2023, 0, 1) + rng.int(0, 500) * DAY_MS),
      seriesIds: Array.from({ length: 5 }, (_, k) => `${id}-${k + 1}`),
    };
  });
});

export interface ReleaseRecord {
  code: string;
  name: string;
  timepointDate: string;
  releaseDate: string;
  from: string;
  to: string;
  releaseType: string;
  releaseStatus: string;
  seriesIds: string[];
}

export const releases = memo((): ReleaseRecord[] => {
  const rng = createRng('releases');
  return Array.from({ length: 40 }, (_, i) => {
    const date = Date.UTC(2024, 0, 5) + i * 9 * DAY_MS;
    const indicator = INDICATORS[i % INDICATORS.length] ?? 'CPI';
    return {
      code: `RL${24000 + i}`,
      name: `${indicator} release`,
      timepointDate: isoDate(date - 35 * DAY_MS),
      releaseDate: isoDate(date),
      from: `${isoDate(date)}T09:00:00`,
      to: `${isoDate(date)}T10:00:00`,
      releaseType: rng.pick(MACRO_RELEASE_TYPES).id,
      releaseStatus: date < Date.UTC(2024, 9, 1) ? 'RELEASED' : 'SCHEDULED',
      seriesIds: Array.from({ length: 4 }, () => String(rng.int(310000, 311919))),
    };
  });
});
