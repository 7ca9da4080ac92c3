// EMIS dictionaries shared by the Documents and DealWatch fakes.
import { COUNTRIES } from '../data/countries.js';
import { memo } from '../data/seeded.js';
import { INDUSTRY_CLASSES } from '../company/company.data.js';

export interface EmisEntity {
  id: number;
  code: string;
  name: string;
}

export const EMIS_COUNTRIES: readonly EmisEntity[] = COUNTRIES.map((c, i) => ({
  id: 10 + i,
  code: c.id,
  name: c.name,
}));

export const EMIS_LANGUAGES: readonly EmisEntity[] = [
  { id: 1, code: 'en', name: 'English' },
  { id: 2, code: 'pl', name: 'Polish' },
  { id: 3, code: 'hu', name: 'Hungarian' },
  { id: 4, code: 'tr', name: 'Turkish' },
  { id: 5, code: 'zh', name: 'Chinese' },
];

export const EMIS_FORMATS: readonly { id: number; name: string }[] = [
  { id: 1, name: 'HTML' },
  { id: 2, name: 'PDF' },
  { id: 3, name: 'DOC' },
  { id: 4, name: 'XLS' },
];

export const EMIS_INDUSTRIES: readonly EmisEntity[] = INDUSTRY_CLASSES.map((c, i) => ({
  id: 300 + i,
  code: c.code,
  name: c.name,
}));

export const EMIS_PUBLICATION_TYPES: readonly EmisEntity[] = [
  { id: 1, code: 'NEWS', name: 'News' },
  { id: 2, code: 'REPORT', name: 'Industry report' },
  { id: 3, code: 'FIN', name: 'Financial statement' },
  { id: 4, code: 'ANALYSIS', name: 'Analysis' },
];

export const EMIS_SOURCE_TYPES: readonly { id: number; name: string }[] = [
  { id: 1, name: 'Newspaper' },
  { id: 2, name: 'Newswire' },
  { id: 3, name: 'Company' },
  { id: 4, name: 'Government' },
];

export const EMIS_TOPICS: readonly { id: number; name: string }[] = [
  { id: 1, name: 'Mergers & Acquisitions' },
  { id: 2, name: 'Economy' },
  { id: 3, name: 'Retail' },
  { id: 4, name: 'Energy' },
  { id: 5, name: 'Banking' },
];

export interface EmisPublication {
  id: number;
  name: string;
  countryCode: string;
  languageCode: string;
  sourceTypeId: number;
}

export const emisPublications = memo((): EmisPublication[] =>
  COUNTRIES.flatMap((c, i) => [
    {
      id: 900 + i * 2,
      name: `${c.name} Business Daily`,
      countryCode: c.id,
      languageCode: 'en',
      sourceTypeId: 1,
    },
    { id: 901 + i * 2, name: `${c.name} Newswire`, countryCode: c.id, languageCode: 'en', sourceTypeId: 2 },
  ]),
);
