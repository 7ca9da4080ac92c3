import { FakeCompanyUpstream } from '../../src/sandbox/company/fake-company.upstream.js';
import {
  COMPANY_ACCOUNTS,
  COMPANY_STANDARDS,
  companies,
  companyStatements,
  INDUSTRY_CLASSES,
} from '../../src/sandbox/company/company.data.js';
import { COMPANY_ROUTES } from '../../src/upstreams/company/company.routes.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http, withGateway } from '../helpers/gateway.js';
import { oneCallPerRequest } from './isolation.js';

const UPSTREAM_TOKEN = 'sbx_company_upstream_key_2e7f9b';

describe('company interface end to end', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['company']) });
  const writer = testConsumer({ id: 'writer', upstreams: new Set(['company']), write: true });
  const outsider = testConsumer({ id: 'outsider', upstreams: new Set(['macro']) });
  const fake = new FakeCompanyUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { company: { fake, token: UPSTREAM_TOKEN } },
    env: oneCallPerRequest('COMPANY'),
    consumers: [reader, writer, outsider],
  });

  const get = (path: string, key = reader.key) => gw.request(path, key);

  function expectCustody(consumerKey: string): void {
    expect(fake.requests).toHaveLength(1);
    const seen = fake.requests[0];
    expect(seen.query.filter(([k]) => k.toLowerCase() === 'token')).toEqual([['token', UPSTREAM_TOKEN]]);
    expect(seen.query.some(([k]) => k === 'sessionId')).toBe(false);
    expect(seen.url).not.toContain(consumerKey);
    for (const v of Object.values(seen.headers)) expect(String(v)).not.toContain(consumerKey);
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers['x-api-key']).toBeUndefined();
  }

  describe('key custody', () => {
    it.each([
      ['Authorization: Bearer', (k: string) => ({ headers: { authorization: `Bearer ${k}` }, query: '' })],
      ['X-API-Key', (k: string) => ({ headers: { 'x-api-key': k }, query: '' })],
      ['raw Authorization', (k: string) => ({ headers: { authorization: k }, query: '' })],
      ['token query (the swagger client)', (k: string) => ({ headers: {}, query: `&token=${k}` })],
      ['sessionId query', (k: string) => ({ headers: {}, query: `&sessionId=${k}` })],
    ])('%s: the upstream gets our token, never the consumer’s key', async (_n, pos) => {
      const p = pos(reader.key);
      const res = await http(
        `${gw.url}/company/companies/match?company_name=bank&country_code=PL${p.query}`,
        {
          headers: p.headers,
        },
      );
      expect(res.status).toBe(200);
      expect(res.json().data.items.length).toBeGreaterThan(0);
      expectCustody(reader.key);
      expect(fake.requests[0].query.slice(0, 2)).toEqual([
        ['company_name', 'bank'],
        ['country_code', 'PL'],
      ]);
      expect(res.text).not.toContain(UPSTREAM_TOKEN);
    });

    it('a consumer’s extra token parameters cannot override ours', async () => {
      const res = await get(`/company/dictionary/currencies?token=attacker&TOKEN=x&token[0]=y`);
      expect(res.status).toBe(200);
      expectCustody(reader.key);
      expect(fake.requests[0].url).not.toContain('attacker');
    });

    it('scrubs an upstream echo of our token', async () => {
      fake.behave({ echoCredential: true });
      const res = await get('/company/dictionary/countries');
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(UPSTREAM_TOKEN);
      expect(res.text).toContain('[REDACTED]');
    });

    it('no key → 401; another interface’s consumer → 403; nothing reaches the upstream', async () => {
      expect((await http(`${gw.url}/company/dictionary/countries`)).status).toBe(401);
      const forbidden = await get('/company/dictionary/countries', outsider.key);
      expect(forbidden.status).toBe(403);
      expect(forbidden.json().error.code).toBe('FORBIDDEN');
      expect(fake.requests).toHaveLength(0);
    });
  });

  describe('every GET operation answers through the gateway, path unchanged below /company', () => {
    const company = companies()[0];
    const statement = companyStatements(company.companyId)[0];
    const values: Record<string, string> = {
      id: String(company.companyId),
      standard_id: String(statement.standardId),
      class_code: INDUSTRY_CLASSES[0].code,
      account_id: String(COMPANY_ACCOUNTS[0].id),
    };
    const fill = (path: string): string => {
      let p = path;
      if (p.startsWith('/companies/statements/')) p = p.replace('{id}', String(statement.statementId));
      if (p.startsWith('/dictionary/standards/')) p = p.replace('{id}', String(COMPANY_STANDARDS[0].id));
      // The fake's dumps, feeds and filters are numbered from 1.
      if (/^\/companies\/(dumps|feeds|search\/filters)\/\{id\}$/.test(p)) p = p.replace('{id}', '1');
      if (p === '/companies/local/{standard_id}')
        p = p.replace('{standard_id}', String(COMPANY_STANDARDS[0].id));
      return p.replace(/\{(\w+)\}/g, (_m, name: string) => values[name]);
    };
    const gets = COMPANY_ROUTES.filter((r) => r.method === 'GET').map((r) => [r.id, fill(r.path)] as const);

    it.each(gets)('%s %s', async (_id, path) => {
      const query = path === '/companies/match' ? '?company_name=bank' : '';
      const res = await get(`/company${path}${query}`);
      expect(res.status).toBe(200);
      expect(fake.requests[0].path).toBe(`/v2/company${path}`);
      if (!path.includes('external_download')) expect(res.json().data).toBeDefined();
    });
  });

  describe('writes: dumps, feeds, search filters', () => {
    const form = (key: string) => ({
      authorization: `Bearer ${key}`,
      'content-type': 'application/x-www-form-urlencoded',
    });

    it('need write permission (403 before any upstream call)', async () => {
      for (const [method, path] of [
        ['POST', '/company/companies/search/filters'],
        ['PATCH', '/company/companies/feeds/1'],
        ['DELETE', '/company/companies/dumps/1'],
      ] as const) {
        const res = await http(gw.url + path, { method, headers: form(reader.key), body: 'name=x' });
        expect(res.status).toBe(403);
      }
      expect(fake.requests).toHaveLength(0);
    });

    it('POST, PATCH and DELETE reach the upstream with the body as sent', async () => {
      const created = await http(`${gw.url}/company/companies/search/filters`, {
        method: 'POST',
        headers: form(writer.key),
        body: 'name=Hungarian+insurers&description=HU',
      });
      expect(created.status).toBe(200);
      expect(fake.requests[0].body.toString()).toBe('name=Hungarian+insurers&description=HU');
      const id = created.json().data.items[0].id as number;
      const patched = await http(`${gw.url}/company/companies/search/filters/${id}`, {
        method: 'PATCH',
        headers: { 'x-api-key': writer.key, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'HU insurers' }),
      });
      expect(patched.status).toBe(200);
      expect(patched.json().data.items[0].name).toBe('HU insurers');
      const feed = await http(`${gw.url}/company/companies/feeds`, {
        method: 'POST',
        headers: form(writer.key),
        body: `name=feed&searchFilterId=${id}`,
      });
      expect(feed.status).toBe(200);
      const dump = await http(`${gw.url}/company/companies/dumps`, {
        method: 'POST',
        headers: form(writer.key),
        body: `name=dump&searchFilterId=${id}`,
      });
      expect(dump.status).toBe(200);
      const deleted = await http(`${gw.url}/company/companies/search/filters/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${writer.key}` },
      });
      expect(deleted.status).toBe(200);
      expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'POST /v2/company/companies/search/filters',
        `PATCH /v2/company/companies/search/filters/${id}`,
        'POST /v2/company/companies/feeds',
        'POST /v2/company/companies/dumps',
        `DELETE /v2/company/companies/search/filters/${id}`,
      ]);
      for (const r of fake.requests) expect(r.query).toEqual([['token', UPSTREAM_TOKEN]]);
    });
  });

  describe('error mapping (ErrorResponse / JsonErrorResponseData, read defensively)', () => {
    it('the fake’s flat 404 → 404 NOT_FOUND with its code and message', async () => {
      const res = await get('/company/companies/999999999');
      expect(res.status).toBe(404);
      expect(res.json().error).toMatchObject({ code: 'NOT_FOUND', upstream: 'company', upstreamCode: 404 });
      expect(res.json().error.message).toContain('Not found');
      expect(res.json().errors).toBeUndefined();
    });

    it('the fake’s errors array on 400 → 400 UPSTREAM_BAD_REQUEST with the vendor’s code', async () => {
      const res = await get('/company/companies/match?limit=5');
      expect(res.status).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'UPSTREAM_BAD_REQUEST',
        upstreamCode: 'INVALID_PARAMETER',
      });
      expect(res.json().error.message).toContain('company_name or external_id is required');
    });

    it.each([
      [401, undefined, 502, 'UPSTREAM_AUTH_FAILED', 'INVALID_TOKEN'],
      [403, undefined, 403, 'UPSTREAM_FORBIDDEN', 'FORBIDDEN'],
      [500, undefined, 502, 'UPSTREAM_ERROR', 'INTERNAL_ERROR'],
      [500, '<html><body>Internal Server Error</body></html>', 502, 'UPSTREAM_ERROR', undefined],
      [503, { weird: ['shape'] }, 502, 'UPSTREAM_ERROR', undefined],
      [502, '', 502, 'UPSTREAM_ERROR', undefined],
      [
        400,
        { data: { errors: [{ code: 'E7', detail: 'bad standard' }] } },
        400,
        'UPSTREAM_BAD_REQUEST',
        'E7',
      ],
    ])('upstream %d %j → %d %s (%s)', async (status, body, expected, code, upstreamCode) => {
      fake.behave({ failWith: { status, body, times: 1 } });
      const res = await get('/company/dictionary/periods');
      expect(res.status).toBe(expected);
      expect(res.json().error).toMatchObject({ code, upstream: 'company', upstreamStatus: status });
      expect(res.json().error.upstreamCode).toBe(upstreamCode);
      expect(res.text).not.toContain(UPSTREAM_TOKEN);
      expect(res.text).not.toContain('<html>');
    });

    it('an upstream 429 → 429 UPSTREAM_RATE_LIMITED with Retry-After', async () => {
      fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 1 } });
      const res = await get('/company/dictionary/periods');
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json().error).toMatchObject({
        code: 'UPSTREAM_RATE_LIMITED',
        upstreamCode: 'RATE_LIMIT_EXCEEDED',
      });
      // The fleet cooldown that follows answers without calling the vendor; wait it out for the next tests.
      expect((await get('/company/dictionary/regions')).status).toBe(429);
      expect(fake.calls()).toBe(1);
      fake.behave({ rateLimit: undefined });
      // The next tests expect the vendor to be called again: wait until the cooldown is over.
      await eventually(async () => (await get('/company/dictionary/regions')).status === 200, {
        intervalMs: 100,
        what: 'the 429 cooldown to end',
      });
    });

    it('our token rejected, echoed in the message → 502 without the token', async () => {
      fake.behave({
        failWith: {
          status: 401,
          body: { error: { code: 'BAD', message: `token ${UPSTREAM_TOKEN} unknown` } },
          times: 1,
        },
      });
      const res = await get('/company/dictionary/periods');
      expect(res.status).toBe(502);
      expect(res.text).not.toContain(UPSTREAM_TOKEN);
    });
  });

  describe('never a JSON answer to a request that accepts only XML', () => {
    it.each([
      ['/company/dictionary/periods?format=xml', {}],
      ['/company/dictionary/periods', { accept: 'application/xml' }],
    ])('%s %j → 415 before any upstream call', async (path, headers) => {
      const res = await http(gw.url + path, {
        headers: { authorization: `Bearer ${reader.key}`, ...headers },
      });
      expect(res.status).toBe(415);
      // The envelope comes in the format the client asked for.
      expect(res.text).toContain('<code>UNSUPPORTED_FORMAT</code>');
      expect(fake.requests).toHaveLength(0);
    });

    it('JSON or anything is still served', async () => {
      const res = await http(gw.url + '/company/dictionary/periods', {
        headers: { authorization: `Bearer ${reader.key}`, accept: 'application/json, application/xml;q=0.5' },
      });
      expect(res.status).toBe(200);
    });
  });

  describe('external_download', () => {
    const id = companies()[1].companyId;

    it('streams the file with its content type and disposition', async () => {
      fake.behave({ fileBytes: 300_000 });
      const res = await get(`/company/companies/${id}/external_download/6419`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      );
      expect(res.headers['content-disposition']).toBe(`attachment; filename="company-${id}-6419.xlsx"`);
      expect(res.headers['content-length']).toBe('300000');
      expect(Buffer.byteLength(res.text, 'latin1')).toBeGreaterThan(0);
      expect(res.text.startsWith('PK')).toBe(true);
      expectCustody(reader.key);
    });

    it('an unknown company → 404 envelope, not a file', async () => {
      const res = await get('/company/companies/999999999/external_download/6419');
      expect(res.status).toBe(404);
      expect(res.json().error.code).toBe('NOT_FOUND');
    });
  });
});
