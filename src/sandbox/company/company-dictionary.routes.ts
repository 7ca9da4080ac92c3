// The fake Company v2's dictionaries.
import { companies, COMPANY_ACCOUNTS, COMPANY_STANDARDS, INDUSTRY_CLASSES } from './company.data.js';
import { COUNTRIES } from '../data/countries.js';
import type { RouteParams } from '../fake-router.js';
import { type CompanyHandler, items, notFound } from './company-errors.js';
import { KIND_NAMES } from './company-views.js';

export function companyDictionaryRoutes(get: (p: string, h: CompanyHandler) => void): void {
  const list =
    (data: unknown[]): CompanyHandler =>
    () =>
      items(data);
  get(
    '/dictionary/cities',
    list(
      COUNTRIES.flatMap((c, i) =>
        [1, 2, 3].map((n) => ({ cityId: i * 10 + n, name: `${c.name} City ${n}`, countryCode: c.id })),
      ),
    ),
  );
  get('/dictionary/company_types', list(Object.entries(KIND_NAMES).map(([id, name]) => ({ id, name }))));
  get('/dictionary/countries', list(COUNTRIES.map((c) => ({ countryCode: c.id, name: c.name }))));
  get(
    '/dictionary/currencies',
    list([
      { currencyCode: 'USD', name: 'US Dollar' },
      { currencyCode: 'EUR', name: 'Euro' },
      { currencyCode: 'PLN', name: 'Polish Zloty' },
      { currencyCode: 'HUF', name: 'Hungarian Forint' },
    ]),
  );
  get('/dictionary/industries/classes', list([...INDUSTRY_CLASSES]));
  get('/dictionary/industries/classes/:class_code', (_req, params) => {
    const c = INDUSTRY_CLASSES.find((x) => x.code === params.class_code);
    return c ? items([{ ...c, level: 4, standard: 'NAICS-like' }]) : notFound();
  });
  get(
    '/dictionary/legal_forms',
    list(
      [...new Set(companies().map((c) => `${c.countryCode}|${c.legalForm}`))].map((k, i) => {
        const [countryCode, name] = k.split('|');
        return { id: i + 1, name, countryCode };
      }),
    ),
  );
  get(
    '/dictionary/market_segments',
    list([
      { id: 1, name: 'Main market' },
      { id: 2, name: 'Alternative market' },
    ]),
  );
  get(
    '/dictionary/operational_statuses',
    list([
      { id: 1, name: 'Operational' },
      { id: 2, name: 'In liquidation' },
    ]),
  );
  get(
    '/dictionary/owner_types',
    list(['Private', 'State', 'Foreign'].map((name, i) => ({ id: i + 1, name }))),
  );
  get(
    '/dictionary/periods',
    list([
      { id: 'Y', name: 'Yearly' },
      { id: 'H', name: 'Half-yearly' },
      { id: 'Q', name: 'Quarterly' },
    ]),
  );
  get(
    '/dictionary/regions',
    list(COUNTRIES.map((c, i) => ({ regionId: 100 + i, name: `${c.name} Central`, countryCode: c.id }))),
  );
  get('/dictionary/standards', list([...COMPANY_STANDARDS]));
  const standard = (params: RouteParams) => COMPANY_STANDARDS.find((s) => s.id === Number(params.id));
  get('/dictionary/standards/:id', (_req, params) => {
    const s = standard(params);
    return s ? items([s]) : notFound();
  });
  get('/dictionary/standards/:id/accounts', (_req, params) =>
    standard(params) ? items(COMPANY_ACCOUNTS.map(({ id, name }) => ({ id, name }))) : notFound(),
  );
  get('/dictionary/standards/:id/accounts/:account_id', (_req, params) => {
    const a = COMPANY_ACCOUNTS.find((x) => x.id === Number(params.account_id));
    return standard(params) && a ? items([{ ...a, details: { standardId: Number(params.id) } }]) : notFound();
  });
  get(
    '/dictionary/stock_exchanges',
    list(
      COUNTRIES.map((c) => ({
        code: `${c.id}SE`,
        name: `${c.name} Stock Exchange`,
        countryCode: c.id,
      })),
    ),
  );
}
