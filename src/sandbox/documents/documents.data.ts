// Fake EMIS documents: generated news items about the sandbox's countries and companies.
import { companies, featuredCompanies } from '../company/company.data.js';
import { createRng, DAY_MS, isoDateTime, memo } from '../data/seeded.js';
import {
  EMIS_COUNTRIES,
  type EmisEntity,
  EMIS_FORMATS,
  EMIS_INDUSTRIES,
  EMIS_LANGUAGES,
  EMIS_PUBLICATION_TYPES,
  EMIS_SOURCE_TYPES,
  EMIS_TOPICS,
  emisPublications,
} from '../emis/emis-dictionaries.data.js';

export interface DocumentRecord {
  id: number;
  title: string;
  body: string;
  format: number;
  language: { code: string; name: string };
  date: string;
  updateDate: string;
  countries: EmisEntity[];
  companies: { id: number; name: string }[];
  topics: { id: number; name: string }[];
  industries: EmisEntity[];
  publication: { id: number; name: string };
  publicationTypes: EmisEntity[];
  sourceType: { id: number; name: string };
  files: { key: string; title: string; format: string }[];
  pages: number;
  size: number;
}

const HEADLINE_SUBJECTS = ['retail sales', 'industrial output', 'bank lending', 'exports', 'energy prices'];
const HEADLINE_VERBS = ['rise', 'fall', 'stabilise', 'surge', 'slow'];
const COMPANY_NEWS = [
  'reports higher quarterly profit',
  'announces new investment programme',
  'publishes annual report',
  'appoints new chief executive',
  'expands into new markets',
  'issues bonds',
];

export const DOCUMENT_COUNT = 300;

function emisDateTime(ms: number): string {
  return `${isoDateTime(ms)}+0000`;
}

/**
 * Two documents in three are company news about a featured company (so a company overview finds
 * several); the rest are economy news about a country that name one of its companies. A document's
 * country is always its first company's country.
 */
export const documents = memo((): DocumentRecord[] => {
  const rng = createRng('documents');
  const pubs = emisPublications();
  const comps = companies();
  const featured = featuredCompanies();
  // Company news goes round the featured companies in turn, so each gets its share.
  let newsNo = 0;
  return Array.from({ length: DOCUMENT_COUNT }, (_, i) => {
    const companyNews = i % 3 !== 2;
    const company = companyNews ? featured[newsNo++ % featured.length] : rng.pick(comps);
    const country = EMIS_COUNTRIES.find((c) => c.code === company.countryCode) ?? EMIS_COUNTRIES[0];
    const subject = rng.pick(HEADLINE_SUBJECTS);
    const language = rng.chance(0.7) ? EMIS_LANGUAGES[0] : rng.pick(EMIS_LANGUAGES);
    const date = Date.UTC(2023, 0, 1) + rng.int(0, 700) * DAY_MS + rng.int(0, 23) * 3_600_000;
    const pub = pubs.find((p) => p.countryCode === country.code) ?? rng.pick(pubs);
    const format = rng.pick(EMIS_FORMATS);
    const id = 88_000 + i;
    const title = companyNews
      ? `${company.companyName} ${rng.pick(COMPANY_NEWS)}`
      : `${country.name} ${subject} ${rng.pick(HEADLINE_VERBS)}`;
    const body = companyNews
      ? `<p>${company.companyName} (${country.name}) said today that it ${title.slice(company.companyName.length + 1)}.</p>`
      : `<p>${country.name}: ${subject} changed in the period. ${company.companyName} commented.</p>`;
    const industry = EMIS_INDUSTRIES.find((x) => x.code === company.industryClass.code);
    return {
      id,
      title,
      body,
      format: format.id,
      language: { code: language?.code ?? 'en', name: language?.name ?? 'English' },
      date: emisDateTime(date),
      updateDate: emisDateTime(date + rng.int(0, 48) * 3_600_000),
      countries: [country],
      companies: [{ id: company.companyId, name: company.companyName }],
      topics: [rng.pick(EMIS_TOPICS)],
      industries: [industry ?? rng.pick(EMIS_INDUSTRIES)],
      publication: { id: pub.id, name: pub.name },
      publicationTypes: [rng.pick(EMIS_PUBLICATION_TYPES)],
      sourceType: EMIS_SOURCE_TYPES.find((s) => s.id === pub.sourceTypeId) ?? { id: 1, name: 'Newspaper' },
      files: format.id === 1 ? [] : [{ key: `F${id}-1`, title: `Document ${id}`, format: format.name }],
      pages: rng.int(1, 40),
      size: rng.int(2_000, 2_000_000),
    };
  });
});
