// Fake CEIC dictionaries.
import type { FakeRouter } from '../fake-router.js';
import { type MacroEnv, type MacroHandler, notFound, ok } from './macro-errors.js';
import { layoutTree } from './layout.data.js';
import {
  MACRO_CLASSIFICATIONS,
  MACRO_COUNTRIES,
  MACRO_FREQUENCIES,
  MACRO_GEO,
  MACRO_INDICATORS,
  MACRO_REGIONS,
  MACRO_RELEASE_STATUSES,
  MACRO_RELEASE_TYPES,
  MACRO_SOURCES,
  MACRO_STATUSES,
  MACRO_UNITS,
} from './macro-dictionaries.data.js';

export function dictionaryRoutes(r: FakeRouter<MacroHandler>, _env: MacroEnv): void {
  const get = (p: string, h: MacroHandler) => r.add('GET', p, h);
  get('/dictionary', () =>
    ok({
      data: {
        frequencies: MACRO_FREQUENCIES,
        units: MACRO_UNITS,
        statuses: MACRO_STATUSES,
        sources: MACRO_SOURCES,
        regions: MACRO_REGIONS,
        countries: MACRO_COUNTRIES,
        classifications: MACRO_CLASSIFICATIONS,
        indicators: MACRO_INDICATORS,
      },
    }),
  );
  get('/dictionary/classifications', () => ok({ data: MACRO_CLASSIFICATIONS }));
  get('/dictionary/classifications/:id/indicators', ({ params }) =>
    MACRO_CLASSIFICATIONS.some((c) => c.id === params.id)
      ? ok({ data: MACRO_INDICATORS.filter((i) => i.classificationId === params.id) })
      : notFound(`Classification ${params.id}`),
  );
  get('/dictionary/countries', () => ok({ data: MACRO_COUNTRIES }));
  get('/dictionary/countries/:id/sources', ({ params }) =>
    MACRO_COUNTRIES.some((c) => c.id === params.id)
      ? ok({ data: MACRO_SOURCES.filter((s) => s.countryId === params.id) })
      : notFound(`Country ${params.id}`),
  );
  get('/dictionary/frequencies', () => ok({ data: MACRO_FREQUENCIES }));
  get('/dictionary/geo', () => ok({ data: MACRO_GEO }));
  get('/dictionary/indicators', () => ok({ data: MACRO_INDICATORS }));
  get('/dictionary/layouts', () =>
    ok({ data: layoutTree().databases.map((d) => ({ id: d.id, name: d.name })) }),
  );
  get('/dictionary/regions', () => ok({ data: MACRO_REGIONS }));
  get('/dictionary/release_statuses', () => ok({ data: MACRO_RELEASE_STATUSES }));
  get('/dictionary/release_types', () => ok({ data: MACRO_RELEASE_TYPES }));
  get('/dictionary/sources', () => ok({ data: MACRO_SOURCES }));
  get('/dictionary/statuses', () => ok({ data: MACRO_STATUSES }));
  get('/dictionary/units', () => ok({ data: MACRO_UNITS }));
}
