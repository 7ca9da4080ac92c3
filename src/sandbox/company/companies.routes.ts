// The fake Company v2's company routes: search (all, by kind, by standard), match, details, statements,
// accounts, benchmark and the external download.
import { createRng } from '../data/seeded.js';
import { int, page } from '../fake-params.js';
import type { RouteParams } from '../fake-router.js';
import type { FakeReply, FakeRequest } from '../fake-upstream.js';
import {
  COMPANY_ACCOUNTS,
  COMPANY_STANDARDS,
  companies,
  companyById,
  type CompanyRecord,
  companyStatements,
  statementAccounts,
  statementById,
} from './company.data.js';
import { bad, type CompanyHandler, items, notFound } from './company-errors.js';
import { details, searchItem, statementView } from './company-views.js';

export function companyRoutes(
  get: (p: string, h: CompanyHandler) => void,
  fileReply: (contentType: string, filename: string, header?: string) => FakeReply,
): void {
  // Literal /companies/... paths first: /companies/{id} would swallow them.
  const search = (filter: (c: CompanyRecord, req: FakeRequest) => boolean): CompanyHandler => {
    return (req) => {
      const q = req.query;
      const limit = int(q.get('limit')) ?? 20;
      const offset = int(q.get('offset')) ?? 0;
      if (Number.isNaN(limit) || limit < 1 || limit > 100) return bad('limit must be between 1 and 100');
      if (Number.isNaN(offset) || offset < 0) return bad('offset must be a non-negative integer');
      const name = (q.get('company_name') ?? q.get('name') ?? q.get('term') ?? '').toLowerCase();
      const countries = (q.get('country_code') ?? q.get('country') ?? '')
        .split(',')
        .map((s) => s.trim().toUpperCase())
        .filter((s) => s !== '');
      const found = companies().filter(
        (c) =>
          filter(c, req) &&
          (name === '' || c.companyName.toLowerCase().includes(name)) &&
          (countries.length === 0 || countries.includes(c.countryCode)),
      );
      return items(page(found, offset, limit).map(searchItem), found.length);
    };
  };
  get(
    '/companies',
    search(() => true),
  );
  get(
    '/companies/banking',
    search((c) => c.kind === 'banking'),
  );
  get(
    '/companies/insurance',
    search((c) => c.kind === 'insurance'),
  );
  get(
    '/companies/non-financial',
    search((c) => c.kind === 'non-financial'),
  );
  get('/companies/local/:standard_id', (req, params) => {
    const id = Number(params.standard_id);
    if (!COMPANY_STANDARDS.some((s) => s.id === id)) return notFound();
    return search((c) => c.standardIds.includes(id))(req, params);
  });
  get('/companies/match', (req) => {
    const q = req.query;
    const name = (q.get('company_name') ?? '').toLowerCase();
    const country = (q.get('country_code') ?? '').toUpperCase();
    const external = q.get('external_id') ?? '';
    const limit = int(q.get('limit')) ?? 10;
    if (Number.isNaN(limit) || limit < 1 || limit > 100) return bad('limit must be between 1 and 100');
    if (name === '' && external === '') return bad('company_name or external_id is required');
    const scored = companies()
      .map((c) => {
        let score = 0;
        if (external !== '' && c.externalIds.some((e) => e.value === external)) score = 1;
        else if (name !== '' && c.companyName.toLowerCase() === name) score = 0.95;
        else if (name !== '' && c.companyName.toLowerCase().includes(name)) score = 0.7;
        if (country !== '' && c.countryCode !== country) score = 0;
        return { c, score };
      })
      .filter((x) => x.score > 0)
      .sort((a, b) => b.score - a.score);
    return items(
      scored.slice(0, limit).map(({ c, score }) => ({ ...searchItem(c), externalIds: c.externalIds, score })),
      scored.length,
    );
  });

  get('/companies/statements/:id', (_req, params) => {
    const s = statementById(Number(params.id));
    if (!s) return notFound();
    return items([
      { ...statementView(s), accounts: statementAccounts(s).map(({ code, value }) => ({ code, value })) },
    ]);
  });
  const accounts = (req: FakeRequest, params: RouteParams, standardId?: number): FakeReply => {
    const s = statementById(Number(params.id));
    if (!s) return notFound();
    if (standardId !== undefined && (Number.isNaN(standardId) || standardId !== s.standardId))
      return notFound();
    const currency = (req.query.get('currency') ?? s.currency).toUpperCase();
    // A fixed rate keeps converted values deterministic.
    const rate = currency === s.currency ? 1 : currency === 'EUR' ? 0.92 : 1.1;
    return items(
      statementAccounts(s).map(({ id, code, value }) => ({
        accountId: id,
        code,
        name: COMPANY_ACCOUNTS.find((a) => a.id === id)?.name,
        value: Math.round(value * rate),
        currency,
      })),
    );
  };
  get('/companies/statements/:id/accounts', (req, params) => accounts(req, params));
  get('/companies/statements/:id/accounts/:standard_id', (req, params) =>
    accounts(req, params, Number(params.standard_id)),
  );

  const company = (params: RouteParams): CompanyRecord | undefined =>
    /^\d+$/.test(params.id ?? '') ? companyById(Number(params.id)) : undefined;
  get('/companies/:id', (_req, params) => {
    const c = company(params);
    return c ? items([details(c)]) : notFound();
  });
  get('/companies/:id/external_download/:class_code', (_req, params) => {
    const c = company(params);
    if (!c) return notFound();
    const classCode = (params.class_code ?? '').replace(/[^\w.-]/g, '_');
    // XLSX files are zip archives: start with the zip magic so clients sniffing the type are content.
    return fileReply(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      `company-${c.companyId}-${classCode}.xlsx`,
      'PK\x03\x04',
    );
  });
  const statements = (req: FakeRequest, params: RouteParams, standardId?: number): FakeReply => {
    const c = company(params);
    if (!c) return notFound();
    const limit = int(req.query.get('limit')) ?? 20;
    const year = int(req.query.get('year'));
    if (Number.isNaN(limit) || Number.isNaN(year)) return bad('limit and year must be integers');
    const list = companyStatements(c.companyId).filter(
      (s) =>
        (standardId === undefined || s.standardId === standardId) && (year === undefined || s.year === year),
    );
    return items(list.slice(0, limit).map(statementView), list.length);
  };
  get('/companies/:id/statements', (req, params) => statements(req, params));
  get('/companies/:id/statements/:standard_id', (req, params) => {
    const standardId = Number(params.standard_id);
    if (!COMPANY_STANDARDS.some((s) => s.id === standardId)) return notFound();
    return statements(req, params, standardId);
  });
  get('/companies/:id/benchmark', (_req, params) => {
    const c = company(params);
    if (!c) return notFound();
    const rng = createRng(`benchmark:${c.companyId}`);
    return {
      status: 200,
      json: {
        data: {
          financial_scores: [2021, 2022, 2023].map((year) => ({
            year,
            score: rng.int(1, 100),
            peerMedian: rng.int(30, 70),
            industryClass: c.industryClass.code,
          })),
        },
      },
    };
  });
}
