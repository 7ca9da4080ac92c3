// Fake EMIS Company API v2 (design notes: upstreams.md §3): base path /v2/company, `token` query only,
// envelope {"data":{"items":[…]}} with camelCase fields. The real error bodies are unknown, so the
// default ones vary by status (see companyErrorBody) and failWith can script any other shape.
import { FakeRouter } from '../fake-router.js';
import { type AuthResult, type FakeReply, type FakeRequest, FakeUpstream } from '../fake-upstream.js';
import { companyError, type CompanyHandler, notFound } from './company-errors.js';
import { companyDictionaryRoutes } from './company-dictionary.routes.js';
import { companyRoutes } from './companies.routes.js';
import { CrudStore, crudRoutes } from './crud.routes.js';

export { companyError, companyErrorBody, type CompanyErrorShape } from './company-errors.js';

export interface FakeCompanyOptions {
  token: string;
  now?: () => number;
}

export class FakeCompanyUpstream extends FakeUpstream {
  readonly token: string;
  private readonly router = new FakeRouter<CompanyHandler>();
  private readonly dumps: CrudStore;
  private readonly feeds: CrudStore;
  private readonly filters: CrudStore;

  constructor(opts: FakeCompanyOptions) {
    super({ kind: 'company', basePath: '/v2/company', now: opts.now });
    this.token = opts.token;
    const created = '2024-03-01T10:00:00';
    this.filters = new CrudStore(() => [
      { name: 'Polish banks', criteria: { countryCode: ['PL'], companyType: ['banking'] }, created },
      { name: 'Large employers', criteria: { employeesFrom: 10000 }, created },
    ]);
    this.feeds = new CrudStore(() => [
      { name: 'Daily PL banks', searchFilterId: 1, status: 'ACTIVE', created },
    ]);
    this.dumps = new CrudStore(() => [
      { name: 'PL banks dump', searchFilterId: 1, status: 'COMPLETED', created },
    ]);
    this.registerRoutes();
  }

  protected override resetState(): void {
    this.dumps.reset();
    this.feeds.reset();
    this.filters.reset();
  }

  protected override errorReply(status: number, message?: string): FakeReply {
    return companyError(status, message);
  }

  protected override authenticate(req: FakeRequest): AuthResult {
    const token = req.query.get('token');
    if (token === null || token === '') return { reply: companyError(401, 'Missing token') };
    return token === this.token ? { credential: token } : { reply: companyError(401, 'Invalid token') };
  }

  protected override handle(req: FakeRequest): FakeReply {
    const match = this.router.match(req.method, req.path);
    if (match.kind === 'not-found') return notFound();
    if (match.kind === 'method-not-allowed') {
      return { ...companyError(405), headers: { allow: match.allowed.join(', ') } };
    }
    return match.handler(req, match.params);
  }

  private registerRoutes(): void {
    const get = (p: string, h: CompanyHandler) => this.router.add('GET', p, h);
    const now = () => this.now();
    crudRoutes(this.router, now, '/companies/dumps', this.dumps, ['name'], { status: 'IN_PROGRESS' }, false);
    crudRoutes(this.router, now, '/companies/feeds', this.feeds, ['name'], { status: 'ACTIVE' }, true);
    crudRoutes(this.router, now, '/companies/search/filters', this.filters, ['name'], {}, true);
    // Literal /companies/... paths before /companies/{id}, which would swallow them.
    companyRoutes(get, (type, name, header) => this.fileReply(type, name, header));
    companyDictionaryRoutes(get);
  }
}
