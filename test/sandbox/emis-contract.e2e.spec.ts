// Contract of the EMIS fakes with the official PHP client (design notes, upstreams.md §6.3): every `_type`
// in every answer names a class the client ships (else: PHP fatal error "Class … not found"), a typed
// `data` comes with `version` (else the client does not build its entities), and errors are an array of
// integer codes. One test per operation of the specification, plus the Auth functions.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { FakeDealsUpstream } from '../../src/sandbox/deals/fake-deals.upstream.js';
import { deals } from '../../src/sandbox/deals/deals.data.js';
import { documents } from '../../src/sandbox/documents/documents.data.js';
import { FakeDocumentsUpstream } from '../../src/sandbox/documents/fake-documents.upstream.js';
import { EMIS_CLASSES } from '../../src/sandbox/emis/emis-classes.js';
import type { FakeEmisUpstream } from '../../src/sandbox/emis/fake-emis.upstream.js';
import { specOperations } from '../helpers/spec-operations.js';
import { call } from './http.js';

const CLIENT_CLASSES: ReadonlySet<string> = new Set(
  (
    JSON.parse(readFileSync(resolve(__dirname, '../fixtures/emis-php-client-classes.json'), 'utf8')) as {
      classes: string[];
    }
  ).classes,
);

/** Every `_type` value anywhere in a JSON value. */
function typesIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) typesIn(v, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '_type') out.push(String(v));
      else typesIn(v, out);
    }
  }
  return out;
}

const TOKEN = 'sbx_contract_token';
const USER = 'sbx_contract_user';
const PASS = 'sbx_contract_pw';

/** What the PHP client sends to Usage/reportMultiple/: its serialised UsageReport\Request entity. */
const usageRequest = JSON.stringify({
  _type: 'Emis\\Entity\\Api\\UsageReport\\Request',
  documents: [88000, 88001].map((documentId) => ({
    _type: 'Emis\\Entity\\Api\\UsageReport\\Document',
    documentId,
    accessTime: { _type: 'DateTime', date: '2024-05-20T09:00:00+0000' },
  })),
});

/** A valid call of each operation (query without the key). */
const QUERIES: Record<string, string> = {
  '/Search/query/': 'countries[0]=PL&includeBody=1&limit=5',
  '/Search/getDocuments/': 'ids[0]=88000&ids[1]=88001',
  '/Search/getMissingIds/': 'ids[0]=88000&ids[1]=1',
  '/Search/getFile/': `key=${documents().find((d) => d.files.length > 0)?.files[0]?.key ?? ''}`,
  '/Search/findCompany/': 'term=bank',
  '/Usage/report/': 'documentId=88000&accessTime=2024-05-20T09:00:00%2B0000',
  '/Usage/reportMultiple/': `data=${encodeURIComponent(usageRequest)}`,
  '/DealInfo/getDealInfo/': `dealId=${deals()[0]?.id ?? 0}`,
  '/SearchAdvisors/getListAdvisors/': 'term=capital',
  '/SearchCompanies/getListCompanies/': 'countries[0]=PL',
  '/SearchDeal/getDeals/': 'limit=5',
};

describe.each([
  ['documents', () => new FakeDocumentsUpstream({ token: TOKEN, username: USER, password: PASS })],
  ['deals', () => new FakeDealsUpstream({ token: TOKEN, username: USER, password: PASS })],
] as const)('EMIS %s fake answers what the PHP client can read', (name, make) => {
  const fake: FakeEmisUpstream = make();

  beforeAll(async () => {
    await fake.start();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('the repository list of client classes holds every class the fakes may use', () => {
    for (const cls of Object.values(EMIS_CLASSES)) expect(CLIENT_CLASSES).toContain(cls);
  });

  const ops = specOperations(name).map((op) => op.path);
  it.each(ops)('%s: every _type is a client class, typed data carries version', async (path) => {
    const query = QUERIES[path] ?? '';
    const res = await call(`${fake.url}${path}?${query}${query ? '&' : ''}token=${TOKEN}`);
    expect(res.status).toBe(200);
    if (path === '/Search/getFile/') {
      expect(res.json).toBeUndefined(); // a file, not JSON
      return;
    }
    expect(res.json.errors).toBeUndefined();
    expect(res.json.data).toBeDefined();
    expect(res.json.version).toEqual(expect.any(String));
    const types = typesIn(res.json);
    for (const t of types) expect(CLIENT_CLASSES).toContain(t);
    if (path === '/Search/query/' || path === '/Search/getDocuments/') {
      expect(res.json.data._type).toBe('Emis\\Entity\\Api\\Document\\Result');
      expect(res.json.data.documents[0]._type).toBe('Emis\\Entity\\Api\\Document\\Document');
    }
    if (path.startsWith('/Dictionary/') && path !== '/Dictionary/getFormats/' && Array.isArray(res.json.data))
      expect(types.length).toBeGreaterThan(0);
  });

  it.each(['Auth/login', 'Auth/getUserData', 'Auth/logout'])(
    '%s: every _type is a client class',
    async (fn) => {
      const login = await call(`${fake.url}/Auth/login/?username=${USER}&password=${PASS}`);
      const session = login.json.data.sessionId as string;
      const res =
        fn === 'Auth/login'
          ? login
          : await call(`${fake.url}/${fn}/?sessionId=${encodeURIComponent(session)}`);
      expect(res.json.errors).toBeUndefined();
      for (const t of typesIn(res.json)) expect(CLIENT_CLASSES).toContain(t);
    },
  );

  it('errors are an array of integer codes with a detail', async () => {
    const res = await call(`${fake.url}/Nope/nothing/?token=${TOKEN}`);
    expect(res.json.errors).toEqual([{ code: expect.any(Number), detail: expect.any(String) }]);
    expect(Number.isInteger(res.json.errors[0].code)).toBe(true);
  });
});

describe('Usage/reportMultiple/', () => {
  const fake = new FakeDocumentsUpstream({ token: TOKEN });
  beforeAll(async () => {
    await fake.start();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('accepts the serialised UsageReport\\Request object the PHP client sends', async () => {
    const res = await call(
      `${fake.url}/Usage/reportMultiple/?data=${encodeURIComponent(usageRequest)}&token=${TOKEN}`,
    );
    expect(res.json).toEqual({ data: { reported: 2 }, version: expect.any(String) });
    expect(fake.usage.map((u) => [u.documentId, u.accessTime])).toEqual([
      [88000, '2024-05-20T09:00:00+0000'],
      [88001, '2024-05-20T09:00:00+0000'],
    ]);
  });

  it('accepts a bare list leniently, and rejects an object without documents', async () => {
    const list = encodeURIComponent(JSON.stringify([{ documentId: 88002 }]));
    const ok = await call(`${fake.url}/Usage/reportMultiple/?data=${list}&token=${TOKEN}`);
    expect(ok.json.data).toEqual({ reported: 1 });
    const bad = encodeURIComponent(JSON.stringify({ _type: 'x' }));
    const res = await call(`${fake.url}/Usage/reportMultiple/?data=${bad}&token=${TOKEN}`);
    expect(res.json.errors[0].code).toBe(3005);
  });
});
