import fc from 'fast-check';
import { CONSUMER_KEY_QUERY_PARAMS } from '../../../src/core/auth/consumer.js';
import { paramNameMatcher } from '../../../src/core/http/param-name.js';
import { removeFormParams, removeJsonMembers } from '../../../src/core/http/write-body.js';
import { FakeCompanyUpstream } from '../../../src/sandbox/company/fake-company.upstream.js';
import { FakeDocumentsUpstream } from '../../../src/sandbox/documents/fake-documents.upstream.js';
import { FakeMacroUpstream } from '../../../src/sandbox/macro/fake-macro.upstream.js';
import type { RecordedRequest } from '../../../src/sandbox/fake-upstream.js';
import { testConsumer } from '../../helpers/consumers.js';
import { http, startGateway, type GatewayHandle } from '../../helpers/gateway.js';
import { credentialsIn, phpParams, vendorReadsCredential } from '../../helpers/vendor-reading.js';

const MACRO_TOKEN = 'sbx_macro_d3_secret_5e1f0a';
const COMPANY_TOKEN = 'sbx_company_d3_secret_a90c4b';
const DOCS_TOKEN = 'sbx_docs_d3_secret_33b7d2';
const FORM = 'application/x-www-form-urlencoded';

describe('no consumer credential in a write body reaches a vendor', () => {
  const writer = testConsumer({ id: 'writer', write: true });
  let macro: FakeMacroUpstream;
  let company: FakeCompanyUpstream;
  let docs: FakeDocumentsUpstream;
  let gw: GatewayHandle;

  beforeAll(async () => {
    macro = new FakeMacroUpstream({ token: MACRO_TOKEN });
    company = new FakeCompanyUpstream({ token: COMPANY_TOKEN });
    docs = new FakeDocumentsUpstream({ token: DOCS_TOKEN, username: 'u', password: 'p' });
    await Promise.all([macro.start(), company.start(), docs.start()]);
    gw = await startGateway({
      env: {
        UPSTREAM_MACRO_BASE_URL: macro.url,
        UPSTREAM_MACRO_TOKEN: MACRO_TOKEN,
        UPSTREAM_COMPANY_BASE_URL: company.url,
        UPSTREAM_COMPANY_TOKEN: COMPANY_TOKEN,
        UPSTREAM_DOCUMENTS_BASE_URL: docs.url,
        UPSTREAM_DOCUMENTS_TOKEN: DOCS_TOKEN,
        ATRIUM_CACHE_MAX_BYTES: '0',
        UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
        UPSTREAM_COMPANY_RETRY_ATTEMPTS: '1',
        UPSTREAM_DOCUMENTS_RETRY_ATTEMPTS: '1',
      },
      consumers: [writer.consumer],
    });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([macro?.close(), company?.close(), docs?.close()]);
  });
  beforeEach(() => {
    macro.reset();
    company.reset();
    docs.reset();
  });

  const send = (
    method: 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'GET',
    path: string,
    type: string,
    body: string,
  ) =>
    http(gw.url + path, {
      method,
      headers: { authorization: `Bearer ${writer.key}`, 'content-type': type },
      body,
    });

  const queryOf = (r: RecordedRequest) => {
    const q = r.url.indexOf('?');
    return q === -1 ? '' : r.url.slice(q + 1);
  };

  /**
   * What the vendor received carries our key once, in the query, and no credential of the consumer's in the
   * query or the body, read the way PHP or a lenient stack reads names; PHP's `$_REQUEST` (the body wins
   * over the query) still finds our key.
   */
  function expectOnlyOurKey(r: RecordedRequest, ourKey: string): void {
    expect(credentialsIn(queryOf(r))).toEqual([['token', ourKey]]);
    const body = r.body.toString('utf8');
    expect(body).not.toContain('EVIL');
    expect(body).not.toContain(writer.key);
    if (String(r.headers['content-type']).startsWith(FORM)) {
      expect(credentialsIn(body)).toEqual([]);
      const request = Object.fromEntries([...phpParams(queryOf(r)), ...phpParams(body)]);
      expect(request.token).toBe(ourKey);
      expect(request.sessionId).toBeUndefined();
    } else {
      const top = Object.keys(JSON.parse(body) as object).map((k) => k.trim().toLowerCase());
      expect(top).not.toContain('token');
      expect(top).not.toContain('sessionid');
    }
  }

  it('the repro: POST /macro/feeds with filter_id=FL-1&token=EVIL reaches the vendor as filter_id=FL-1', async () => {
    const res = await send('POST', '/macro/feeds', FORM, 'filter_id=FL-1&token=EVIL');
    expect(res.status).toBe(200);
    expect(macro.requests).toHaveLength(1);
    expect(macro.requests[0].body.toString()).toBe('filter_id=FL-1');
    expect(macro.requests[0].headers['content-type']).toBe(FORM);
    expectOnlyOurKey(macro.requests[0], MACRO_TOKEN);
  });

  it.each([
    'token=EVIL',
    'TOKEN=EVIL',
    'Token[]=EVIL',
    'token[0]=EVIL',
    'token[x]=EVIL',
    'sessionId=EVIL',
    'SESSIONID[]=EVIL',
    'sessionid[0]=EVIL',
    '%20token=EVIL',
    '+token=EVIL',
    '%20%20sessionId=EVIL',
    '%09token=EVIL',
    'token%00=EVIL',
    'token%00%FF=EVIL',
    '%5Btoken%5D=EVIL',
    'token.x=EVIL',
    't%6Fken=EVIL',
    'session_id=EVIL',
    'token=EVIL&token=EVIL',
  ])('form %s, first, middle or last, is removed; the other pairs arrive as sent', async (cred) => {
    for (const body of [
      `${cred}&filter_id=FL-1&name=a+b`,
      `filter_id=FL-1&${cred}&name=a+b`,
      `filter_id=FL-1&name=a+b&${cred}`,
    ]) {
      macro.reset();
      const res = await send('POST', '/macro/feeds', FORM, body);
      expect(res.status).toBe(200);
      expect(macro.requests).toHaveLength(1);
      expect(macro.requests[0].body.toString()).toBe('filter_id=FL-1&name=a+b');
      expectOnlyOurKey(macro.requests[0], MACRO_TOKEN);
    }
  });

  it('re-encodes nothing else: order, escapes, + signs, empty pairs and a trailing & stay byte for byte', async () => {
    const body =
      'name=CPI+weekly&token=EVIL&description=a%2Bb%20%E2%82%AC&&filter_id=FL-1&sessionId=EVIL&full_dump=False&';
    const res = await send('POST', '/macro/feeds', `${FORM}; charset=UTF-8`, body);
    expect(res.status).toBe(200);
    expect(macro.requests[0].body.toString()).toBe(
      'name=CPI+weekly&description=a%2Bb%20%E2%82%AC&&filter_id=FL-1&full_dump=False&',
    );
    expect(macro.requests[0].headers['content-type']).toBe(`${FORM}; charset=UTF-8`);
    expectOnlyOurKey(macro.requests[0], MACRO_TOKEN);
  });

  it('a pair hiding a credential behind ";" (servers that also split on ;) gets its ; escaped', async () => {
    const res = await send('POST', '/macro/feeds', FORM, 'filter_id=FL-1&name=x;token=EVIL');
    expect(res.status).toBe(200);
    const got = macro.requests[0].body.toString();
    expect(got).toBe('filter_id=FL-1&name=x%3Btoken=EVIL');
    // Read by a server splitting on both & and ;, no token appears.
    expect(credentialsIn(got.replace(/;/g, '&'))).toEqual([]);
    // A ; in a value that hides nothing is left alone.
    macro.reset();
    await send('POST', '/macro/feeds', FORM, 'filter_id=FL-1&name=x;y');
    expect(macro.requests[0].body.toString()).toBe('filter_id=FL-1&name=x;y');
  });

  it.each([
    ['token', '{"filter_id":"FL-1","token":"EVIL"}'],
    ['first and re-cased', '{"TOKEN":"EVIL","filter_id":"FL-1"}'],
    ['escaped name', '{"filter_id":"FL-1","\\u0074oken":"EVIL"}'],
    ['sessionId array', '{"filter_id":"FL-1","sessionId":["EVIL"]}'],
    ['bracketed', '{"filter_id":"FL-1","token[]":"EVIL"}'],
    ['space-padded', '{" token ":"EVIL","filter_id":"FL-1"}'],
    ['object value', '{"token":{"v":"EVIL"},"filter_id":"FL-1"}'],
    ['duplicated', '{"token":"EVIL","filter_id":"FL-1","token":"EVIL"}'],
    ['snake case', '{"filter_id":"FL-1","session_id":"EVIL"}'],
  ])('JSON %s: the top-level member is removed', async (_name, body) => {
    const res = await send('POST', '/macro/feeds', 'application/json', body);
    expect(res.status).toBe(200);
    expect(JSON.parse(macro.requests[0].body.toString())).toEqual({ filter_id: 'FL-1' });
    expectOnlyOurKey(macro.requests[0], MACRO_TOKEN);
  });

  it('JSON keeps every other byte (whitespace, escapes, order) and leaves nested objects as they are', async () => {
    const body = [
      '{',
      '  "name": "CPI weekly",',
      '  "token": "EVIL",',
      '  "filter_id": "FL-1",',
      '  "description": "a\\u00e9\\"b\\\\",',
      '  "filter_details": {"token": "nested, a value", "x": [1, {"sessionId": "n"}]}',
      '}',
      '',
    ].join('\n');
    const res = await send('PATCH', '/macro/feeds/FD-2000', 'application/json; charset=utf-8', body);
    expect(res.status).toBeLessThan(500);
    expect(macro.requests).toHaveLength(1);
    expect(macro.requests[0].body.toString()).toBe(body.replace('\n  "token": "EVIL",', ''));
    expect(macro.requests[0].headers['content-type']).toBe('application/json; charset=utf-8');
    expectOnlyOurKey(macro.requests[0], MACRO_TOKEN);
  });

  it('the company interface strips the same way (POST and PATCH, form and JSON)', async () => {
    const created = await send(
      'POST',
      '/company/companies/search/filters',
      FORM,
      'name=HU&sessionId=EVIL&%20token=EVIL',
    );
    expect(created.status).toBe(200);
    expect(company.requests[0].body.toString()).toBe('name=HU');
    expectOnlyOurKey(company.requests[0], COMPANY_TOKEN);
    const id = created.json().data.items[0].id as number;
    const patched = await send(
      'PATCH',
      `/company/companies/search/filters/${id}`,
      'application/json',
      '{"token":"EVIL","name":"HU2"}',
    );
    expect(patched.status).toBe(200);
    expect(company.requests[1].body.toString()).toBe('{"name":"HU2"}');
    expectOnlyOurKey(company.requests[1], COMPANY_TOKEN);
  });

  it('a body that is nothing but credentials arrives empty of them', async () => {
    const res = await send('DELETE', '/macro/feeds/FD-2000', FORM, 'token=EVIL&sessionId=EVIL');
    expect(res.status).toBeLessThan(500);
    expect(macro.requests).toHaveLength(1);
    expect(macro.requests[0].body.toString()).toBe('');
  });

  it('an EMIS GET never forwards a body: a body sessionId cannot reach the document vendor', async () => {
    const res = await send('GET', '/documents/Dictionary/getCountries/', FORM, 'sessionId=EVIL&token=EVIL');
    expect(res.status).toBe(200);
    expect(docs.requests).toHaveLength(1);
    expect(docs.requests[0].body.length).toBe(0);
    expect(docs.requests[0].url).not.toContain('EVIL');
    expect(credentialsIn(queryOf(docs.requests[0]))).toEqual([['token', DOCS_TOKEN]]);
  });

  it.each([
    ['text/plain', 'token=EVIL', 415, 'UNSUPPORTED_FORMAT'],
    [
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="token"\r\n\r\nEVIL\r\n--x--',
      415,
      'UNSUPPORTED_FORMAT',
    ],
    ['application/octet-stream', '{"token":"EVIL"}', 415, 'UNSUPPORTED_FORMAT'],
    ['application/json', '{"filter_id":"FL-1","token":"EVIL",}', 400, 'VALIDATION_FAILED'],
    ['application/json', '\ufeff{"token":"EVIL"}', 400, 'VALIDATION_FAILED'],
    [FORM, '{"filter_id":"FL-1","token":"EVIL"}', 400, 'VALIDATION_FAILED'],
  ])(
    'a %s body the gateway cannot read safely is refused before any upstream call',
    async (type, body, status, code) => {
      const res = await send('POST', '/macro/feeds', type, body);
      expect(res.status).toBe(status);
      expect(res.json().error.code).toBe(code);
      expect(res.headers['x-request-id']).toBeTruthy();
      expect(macro.requests).toHaveLength(0);
    },
  );
});

describe('the body codecs, on generated bodies', () => {
  const isCredential = paramNameMatcher(CONSUMER_KEY_QUERY_PARAMS);
  const name = fc.oneof(
    fc.constantFrom(
      'token',
      'TOKEN',
      'sessionId',
      ' token',
      'token[]',
      'session_id',
      'name',
      'filter_id',
      'a.b',
    ),
    fc.string({ maxLength: 8 }),
  );

  it('JSON: exactly the top-level credential members go, the rest parses to the same values', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(name, fc.jsonValue({ maxDepth: 2 })), { maxLength: 8 }),
        fc.constantFrom(0, 1, 2, '\t'),
        (members, indent) => {
          const obj = Object.fromEntries(members.filter(([k]) => k !== '__proto__'));
          const text = JSON.stringify(obj, null, indent);
          const body = Buffer.from(text);
          const out = removeJsonMembers(body, isCredential);
          const sent = JSON.parse(text) as Record<string, unknown>;
          const expected = Object.fromEntries(Object.entries(sent).filter(([k]) => !isCredential(k)));
          expect(JSON.parse(out.toString())).toEqual(expected);
          // Nothing to remove: the very same bytes, not even a copy.
          if (Object.keys(expected).length === Object.keys(sent).length) expect(out).toBe(body);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('form: pairs a vendor reads as a credential go, every other pair keeps its bytes and order', () => {
    const rawName = fc.oneof(
      fc.constantFrom(
        'token',
        '%20token',
        '+sessionId',
        'token%00%FF',
        'TOKEN%5B%5D',
        'tok%65n',
        'name',
        'a%2Bb',
      ),
      fc.string({
        unit: fc.constantFrom('a', 't', 'o', 'k', 'e', 'n', '%', '2', '0', '+', '[', ']', '.'),
        maxLength: 8,
      }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(rawName, fc.constantFrom('v', 'EVIL', 'a+b%2B', '')), { maxLength: 8 }),
        (pairs) => {
          const raw = pairs.map(([k, v]) => `${k}=${v}`);
          const body = Buffer.from(raw.join('&'));
          const out = removeFormParams(body, isCredential).toString();
          const kept = out === '' ? [] : out.split('&');
          // In order, a subsequence of what was sent, byte for byte.
          let at = 0;
          for (const p of kept) {
            at = raw.indexOf(p, at);
            expect(at).toBeGreaterThanOrEqual(0);
            at++;
          }
          // Nothing a vendor would read as a credential survived; nothing else was dropped.
          for (const p of kept) expect(vendorReadsCredential(p.slice(0, p.indexOf('=')))).toBe(false);
          for (const p of raw)
            if (!isCredential(decodeURIComponentSafe(p.slice(0, p.indexOf('='))))) expect(kept).toContain(p);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

function decodeURIComponentSafe(s: string): string {
  const spaced = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
