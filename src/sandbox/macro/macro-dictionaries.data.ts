// Dictionaries of the fake CEIC macro API: frequencies, units, statuses, countries, sources, regions,
// classifications, indicators, geo and release vocabularies.
import { COUNTRIES, type IdName } from '../data/countries.js';
import { CONCEPTS, CONCEPTS_BY_TOPIC, TOPICS } from './macro-concepts.data.js';

/** Indicator names, from the concepts the series measure (in topic order, each once). */
export const INDICATORS: readonly string[] = [...new Set(CONCEPTS.map((c) => c.indicator))];

export const MACRO_FREQUENCIES: readonly IdName[] = [
  { id: 'D', name: 'Daily' },
  { id: 'W', name: 'Weekly' },
  { id: 'M', name: 'Monthly' },
  { id: 'Q', name: 'Quarterly' },
  { id: 'H', name: 'Half-yearly' },
  { id: 'Y', name: 'Yearly' },
];

export const MACRO_UNITS: readonly IdName[] = [
  { id: 'U1', name: '2018=100' },
  { id: 'U2', name: 'USD mn' },
  { id: 'U3', name: '% YoY' },
  { id: 'U4', name: '%' },
  { id: 'U5', name: 'Local currency bn' },
  { id: 'U6', name: 'Person th' },
  { id: 'U7', name: 'Index' },
  { id: 'U8', name: '% pa' },
  { id: 'U9', name: 'Local currency bn, 2015 prices' },
  { id: 'U10', name: 'Local currency per USD' },
];

export const MACRO_STATUSES: readonly IdName[] = [
  { id: 'T', name: 'Active' },
  { id: 'C', name: 'Discontinued' },
  { id: 'B', name: 'Rebased' },
  { id: 'D', name: 'On-demand' },
];

export const MACRO_COUNTRIES: readonly (IdName & { isoCode: string })[] = COUNTRIES.map((c) => ({
  id: c.id,
  name: c.name,
  isoCode: c.id,
}));

export const MACRO_SOURCES: readonly (IdName & { countryId: string })[] = COUNTRIES.flatMap((c, i) => [
  { id: `SRC${100 + i * 2}`, name: `National Statistics Office of ${c.name}`, countryId: c.id },
  { id: `SRC${101 + i * 2}`, name: `Central Bank of ${c.name}`, countryId: c.id },
]);

export const MACRO_REGIONS: readonly IdName[] = [
  { id: 'R1', name: 'Europe' },
  { id: 'R2', name: 'Asia' },
  { id: 'R3', name: 'Americas' },
  { id: 'R4', name: 'Middle East & Africa' },
];

export const MACRO_CLASSIFICATIONS: readonly IdName[] = [
  { id: 'CL1', name: 'National Accounts' },
  { id: 'CL2', name: 'Prices' },
  { id: 'CL3', name: 'Labour Market' },
  { id: 'CL4', name: 'Foreign Trade' },
  { id: 'CL5', name: 'Monetary' },
];

/** Each indicator in the classification of the layout topic its concepts belong to. */
export const MACRO_INDICATORS: readonly (IdName & { classificationId: string })[] = INDICATORS.map(
  (name, i) => {
    const topic = TOPICS.find((t) =>
      (CONCEPTS_BY_TOPIC[t] as readonly { indicator: string }[]).some((c) => c.indicator === name),
    );
    return {
      id: `IN${1000 + i}`,
      name,
      classificationId: MACRO_CLASSIFICATIONS.find((c) => c.name === topic)?.id ?? 'CL1',
    };
  },
);

export const MACRO_GEO: readonly { id: string; type: string; title: string; isoCode: string }[] =
  COUNTRIES.map((c, i) => ({ id: `G${200 + i}`, type: 'country', title: c.name, isoCode: c.id }));

export const MACRO_RELEASE_STATUSES: readonly IdName[] = [
  { id: 'SCHEDULED', name: 'Scheduled' },
  { id: 'RELEASED', name: 'Released' },
  { id: 'DELAYED', name: 'Delayed' },
];

export const MACRO_RELEASE_TYPES: readonly IdName[] = [
  { id: 'NEW', name: 'New data' },
  { id: 'REVISION', name: 'Revision' },
];
