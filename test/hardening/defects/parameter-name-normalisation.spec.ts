import fc from 'fast-check';
import type { FastifyRequest } from 'fastify';
import { CONSUMER_KEY_QUERY_PARAMS } from '../../../src/core/auth/consumer.js';
import { extractConsumerKey } from '../../../src/core/auth/consumer-key.js';
import { normalizeParamName, paramNameMatcher } from '../../../src/core/http/param-name.js';
import { fastifyQueryParser } from '../../../src/core/http/query-string.js';
import { canonicalQuery } from '../../../src/proxy/cache/cache-key.js';
import { FakeDealsUpstream } from '../../../src/sandbox/deals/fake-deals.upstream.js';
import { FakeDocumentsUpstream } from '../../../src/sandbox/documents/fake-documents.upstream.js';
import { FakeMacroUpstream } from '../../../src/sandbox/macro/fake-macro.upstream.js';
import type { RecordedRequest } from '../../../src/sandbox/fake-upstream.js';
import { testConsumer } from '../../helpers/consumers.js';
import { rawGet, startGateway, type GatewayHandle } from '../../helpers/gateway.js';
import { CREDENTIAL_NAMES, credentialsIn, lenientName, phpVarName } from '../../helpers/vendor-reading.js';

const MACRO_TOKEN = 'sbx_macro_d4_secret_0b8e2d';
const DOCS_TOKEN = 'sbx_docs_d4_secret_7c11fa';
const DEALS_USER = 'sbx_deals_d4_user';
const DEALS_PASSWORD = 'sbx_deals_d4_pw_e5a0c3';

const isCredential = paramNameMatcher(CONSUMER_KEY_QUERY_PARAMS);

/** Names a vendor would read as a credential, by PHP's rules or a lenient stack's (decoded names). */
function vendorReads(name: string): boolean {
  const php = phpVarName(name);
  if (php !== undefined && (CREDENTIAL_NAMES as readonly string[]).includes(php)) return true;
  return CREDENTIAL_NAMES.some((n) => n.toLowerCase() === lenientName(name));
}

// Characters that matter to some stack's reading of a name, and the letters of the credential names.
const hostileChar = fc.constantFrom(
  ...[' ', '\t', '\n', '\r', '\u0000', '\u000b', '\u00a0', '\u200b', '.', '[', ']', '0', '_', '-', 'x'],
  ...'tokenTOKENsessionIdSESSIONiD'.split(''),
);
const nearCredential = fc
  .tuple(
    fc.array(fc.constantFrom(' ', '\t', '[', '.', '\u0000'), { maxLength: 3 }),
    fc.constantFrom(...CREDENTIAL_NAMES),
    fc.boolean(),
    fc.array(hostileChar, { maxLength: 4 }),
  )
  .map(([pre, name, upper, post]) => pre.join('') + (upper ? name.toUpperCase() : name) + post.join(''));
const anyName = fc.oneof(fc.string({ unit: hostileChar, maxLength: 14 }), nearCredential);

describe('parameter-name normalisation', () => {
  describe('one normalisation, the superset of the vendors’ readings', () => {
    it.each([
      [' token', 'token'],
      ['\ttoken', 'token'],
      ['  sessionId', 'sessionid'],
      ['token\u0000tail', 'token'],
      ['sessionId\u0000\u00ff', 'sessionid'],
      ['TOKEN', 'token'],
      ['token[]', 'token'],
      ['token[0]', 'token'],
      ['sessionId[a][b]', 'sessionid'],
      ['[token]', 'token'],
      ['token.x', 'token'],
      ['\u200bsessionId', 'sessionid'],
      ['ｔｏｋｅｎ', 'token'],
      ['ſessıonId', 'sessionid'],
      ['session_id', 'sessionid'],
      ['Session-ID ', 'sessionid'],
    ])('%j reads as %s', (name, key) => {
      expect(normalizeParamName(name)).toBe(key);
      expect(isCredential(name)).toBe(true);
    });

    it.each([
      'limit',
      'tokens',
      'tokenized',
      'a[token]',
      'x.token',
      'filter_id',
      'countries[0]',
      'session',
      '',
    ])('%j is not a credential', (name) => expect(isCredential(name)).toBe(false));

    it('every name PHP or a lenient stack reads as token/sessionId is stripped (property)', () => {
      fc.assert(
        fc.property(anyName, (name) => !vendorReads(name) || isCredential(name)),
        { numRuns: 20_000 },
      );
    });

    it('the consumer-auth guard and the strip agree: every name the guard takes a key from is stripped', () => {
      const guardReads = (name: string): boolean => {
        const qs = `${encodeURIComponent(name)}=atr_probe_key`;
        const req = {
          headers: {},
          query: fastifyQueryParser(qs),
          url: `/x?${qs}`,
        } as unknown as FastifyRequest;
        return extractConsumerKey(req) === 'atr_probe_key';
      };
      for (const name of ['token', 'sessionId', 'token[0]', 'token[]', 'sessionId[x]'])
        expect([name, guardReads(name)]).toEqual([name, true]);
      fc.assert(
        fc.property(anyName, (name) => !guardReads(name) || isCredential(name)),
        { numRuns: 5_000 },
      );
    });

    it('cache keys leave out whatever the strip removes', () => {
      const key = canonicalQuery([
        ['limit', '2'],
        [' token', 'atr_someone_else'],
        ['sessionId\u0000x', 'atr_someone_else'],
        ['[TOKEN]', 'atr_someone_else'],
      ]);
      expect(key).toBe('limit=2');
    });
  });

  describe('what the vendors receive', () => {
    const reader = testConsumer({ id: 'reader' });
    let macro: FakeMacroUpstream;
    let docs: FakeDocumentsUpstream;
    let deals: FakeDealsUpstream;
    let gw: GatewayHandle;

    beforeAll(async () => {
      macro = new FakeMacroUpstream({ token: MACRO_TOKEN });
      docs = new FakeDocumentsUpstream({ token: DOCS_TOKEN, username: 'unused', password: 'unused' });
      deals = new FakeDealsUpstream({
        token: 'unused-portal-key',
        username: DEALS_USER,
        password: DEALS_PASSWORD,
      });
      await Promise.all([macro.start(), docs.start(), deals.start()]);
      gw = await startGateway({
        env: {
          UPSTREAM_MACRO_BASE_URL: macro.url,
          UPSTREAM_MACRO_TOKEN: MACRO_TOKEN,
          // Documents with the portal key (`token`), deals with the login step (`sessionId`).
          UPSTREAM_DOCUMENTS_BASE_URL: docs.url,
          UPSTREAM_DOCUMENTS_TOKEN: DOCS_TOKEN,
          UPSTREAM_DEALS_BASE_URL: deals.url,
          UPSTREAM_DEALS_USERNAME: DEALS_USER,
          UPSTREAM_DEALS_PASSWORD: DEALS_PASSWORD,
          ATRIUM_CACHE_MAX_BYTES: '0',
        },
        consumers: [reader.consumer],
      });
    });
    afterAll(async () => {
      await gw?.close();
      await Promise.all([macro?.close(), docs?.close(), deals?.close()]);
    });
    beforeEach(() => {
      macro.reset();
      docs.reset();
      deals.reset();
    });

    const queryOf = (r: RecordedRequest) => r.url.slice(r.url.indexOf('?') + 1);
    const bearer = { authorization: `Bearer ${reader.key}` };

    // As sent on the wire, byte for byte (rawGet does not tidy the request line).
    const VARIANTS = [
      '%20token=EVIL',
      '%20sessionId=EVIL',
      '+sessionId=EVIL',
      '%09%20token=EVIL',
      'sessionId%00=EVIL',
      'sessionId%00%FF=EVIL',
      'token%00.x=EVIL',
      '%5BsessionId%5D=EVIL',
      'SESSIONID[0]=EVIL',
      'sessionId[]=EVIL',
      'Token[x]=EVIL',
      'sessionId.x=EVIL',
      '%20session%5Fid=EVIL',
      `%20token=${reader.key.replace(/[^A-Za-z0-9_-]/g, '')}`,
    ];

    /** The vendor found exactly one credential, `name`, and it was not the consumer's. */
    function expectOneCredential(r: RecordedRequest, name: string, value?: string): void {
      const found = credentialsIn(queryOf(r));
      expect(found).toHaveLength(1);
      expect(found[0][0]).toBe(name);
      if (value !== undefined) expect(found[0][1]).toBe(value);
      expect(r.url).not.toContain('EVIL');
      expect(r.url).not.toContain(reader.key.replace(/[^A-Za-z0-9_-]/g, ''));
    }

    it.each(VARIANTS)('documents (PHP, portal key): ?%s never arrives beside our token', async (v) => {
      const res = await rawGet(gw.url, `/documents/Dictionary/getCountries/?${v}`, bearer);
      expect(res.status).toBe(200);
      expect(docs.requests).toHaveLength(1);
      expectOneCredential(docs.requests[0], 'token', DOCS_TOKEN);
    });

    it.each(VARIANTS)('deals (PHP, login step): ?%s never arrives beside our session', async (v) => {
      const res = await rawGet(gw.url, `/deals/SearchDeal/getDeals/?${v}`, bearer);
      expect(res.status).toBe(200);
      const calls = deals.requests.filter((r) => !r.path.includes('/Auth/'));
      expect(calls).toHaveLength(1);
      expectOneCredential(calls[0], 'sessionId');
    });

    it.each(VARIANTS)('macro: ?limit=1&%s never arrives beside our token', async (v) => {
      const res = await rawGet(gw.url, `/macro/feeds?limit=1&${v}`, bearer);
      expect(res.status).toBe(200);
      expect(macro.requests).toHaveLength(1);
      expectOneCredential(macro.requests[0], 'token', MACRO_TOKEN);
      expect(macro.requests[0].query).toContainEqual(['limit', '1']);
    });

    it('ordinary parameters around them pass as sent (in the canonical order: sorted by name)', async () => {
      const res = await rawGet(
        gw.url,
        '/documents/Dictionary/getCountries/?a[0]=1&%20token=EVIL&tokens=2&x.token=3&b=%2B',
        bearer,
      );
      expect(res.status).toBe(200);
      expect(docs.requests[0].query.filter(([k]) => k !== 'token')).toEqual([
        ['a[0]', '1'],
        ['b', '+'],
        ['tokens', '2'],
        ['x.token', '3'],
      ]);
    });
  });
});
