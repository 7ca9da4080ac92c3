import { randomBytes } from 'node:crypto';
import { etagOf } from '../../../src/core/http/etag.js';
import { testConsumer } from '../../helpers/consumers.js';
import { http, startGateway, type GatewayHandle, type HttpResult } from '../../helpers/gateway.js';
import { recordSecret } from '../../observability/log-capture.js';
import {
  echoForms,
  findForms,
  KeyEchoVendor,
  slashyKey,
  type UpstreamName,
  type VendorRequest,
  vendorEnv,
} from '../../helpers/key-echo-vendor.js';

/** Keys of plain letters and digits: the shape the literal-only scrubber was written for. */
function plainKey(prefix: string): string {
  const key = `${prefix}${randomBytes(12).toString('hex')}`;
  recordSecret(key);
  return key;
}

/** One JSON route, one streamed file route per upstream (gateway paths). */
const ROUTES: Record<UpstreamName, { json: string; file: string }> = {
  macro: { json: '/macro/feeds', file: '/macro/series/310901/visual' },
  company: { json: '/company/dictionary/currencies', file: '/company/companies/C1/external_download/X1' },
  documents: { json: '/documents/Dictionary/getTopics/', file: '/documents/Search/getFile/?key=F1' },
  deals: { json: '/deals/SearchDeal/getDeals/', file: '' },
};

/** Headers a hostile vendor fills with our credential (in one form). */
function hostileHeaders(
  form: string,
  vendor: KeyEchoVendor,
  req: VendorRequest,
): Record<string, string | string[]> {
  return {
    etag: `"${form}"`,
    'last-modified': form,
    'content-disposition': `attachment; filename="${form}.json"`,
    'content-language': form,
    location: `${vendor.baseUrl(req.upstream)}/next?token=${form}`,
    'content-location': `/v2/x?token=${form}`,
    'set-cookie': [`sid=${form}; Path=/; HttpOnly`, `other=${form}`],
    link: `<${vendor.baseUrl(req.upstream)}/page2?token=${form}>; rel="next"`,
    'www-authenticate': `Bearer ${form}`,
    'x-debug-credential': form,
    refresh: `0; url=/x?token=${form}`,
  };
}

/** Headers the gateway never passes through, whatever their value. */
const NEVER_PASSED = [
  'location',
  'content-location',
  'set-cookie',
  'link',
  'www-authenticate',
  'x-debug-credential',
  'refresh',
];

function headerText(res: HttpResult): string {
  return Object.entries(res.headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
}

describe('no vendor key in answer headers', () => {
  describe.each([
    ['with /, + and = in keys and session ids', slashyKey],
    ['with alphanumeric keys and session ids', plainKey],
  ])('%s', (_shape, makeKey) => {
    const consumer = testConsumer({ id: 'reader' });
    const keys = {
      macro: makeKey('mk'),
      company: makeKey('ck'),
      documentsPassword: makeKey('dp'),
      dealsPassword: makeKey('wp'),
    };
    const vendor = new KeyEchoVendor({ documents: keys.documentsPassword, deals: keys.dealsPassword });
    let gw: GatewayHandle;
    /** Every secret of the gateway's: the keys, the passwords and every session id the vendor issued. */
    const secrets = (): string[] => [
      keys.macro,
      keys.company,
      keys.documentsPassword,
      keys.dealsPassword,
      ...vendor.issuedSessions,
    ];

    beforeAll(async () => {
      vendor.nextSessionIds.push(makeKey('s1'), makeKey('s2'), makeKey('s3'), makeKey('s4'));
      await vendor.start();
      gw = await startGateway({
        env: { ...vendorEnv(vendor, keys), UPSTREAM_MACRO_RETRY_ATTEMPTS: '1' },
        consumers: [consumer.consumer],
      });
    });
    afterAll(async () => {
      await gw?.close();
      await vendor.close();
    });

    const get = (path: string, headers: Record<string, string> = {}) =>
      http(gw.url + path, { headers: { authorization: `Bearer ${consumer.key}`, ...headers } });

    const upstreams: UpstreamName[] = ['macro', 'company', 'documents', 'deals'];

    it.each(upstreams)(
      '%s: no form of the credential in any header of a 200, fetched or cached',
      async (u) => {
        const formNames = Object.keys(echoForms('x'));
        for (const formName of formNames) {
          vendor.script = (req) => ({
            headers: hostileHeaders(echoForms(req.credential)[formName], vendor, req),
            body: '{"data":[]}',
          });
          const before = vendor.requests.length;
          const fetched = await get(ROUTES[u].json, { 'cache-control': 'no-cache' });
          expect({ formName, status: fetched.status }).toEqual({ formName, status: 200 });
          // The vendor really echoed the credential the gateway sent it.
          const seen = vendor.requests.slice(before).at(-1)!;
          expect(seen.upstream).toBe(u);
          expect(secrets()).toContain(seen.credential);
          expect({ formName, found: findForms(headerText(fetched), secrets()) }).toEqual({
            formName,
            found: [],
          });
          for (const h of NEVER_PASSED)
            expect({ formName, h, v: fetched.headers[h] }).toEqual({ formName, h, v: undefined });
          // Validators carrying a secret are dropped (a masked one would be false); others are masked. The
          // ETag of a cached route is the gateway's own, a digest of the bytes the consumer reads.
          expect(fetched.headers.etag).toBe(etagOf(fetched.text));
          expect(fetched.headers['last-modified']).toBeUndefined();
          if (formName === 'basicHeader') {
            // The secret's bytes inside a larger base64 value: that part is masked.
            expect(fetched.headers['content-disposition']).toMatch(
              /^attachment; filename=".*\[REDACTED\].*\.json"$/,
            );
          } else {
            expect(fetched.headers['content-disposition']).toBe('attachment; filename="[REDACTED].json"');
            expect(fetched.headers['content-language']).toBe('[REDACTED]');
          }

          const cached = await get(ROUTES[u].json);
          expect(cached.headers['x-cache']).toBe('HIT');
          expect(findForms(headerText(cached), secrets())).toEqual([]);
        }
      },
    );

    it('still passes the allow-listed headers through when they carry no secret', async () => {
      vendor.script = () => ({
        headers: {
          etag: '"v42"',
          'last-modified': 'Tue, 02 Jan 2024 03:04:05 GMT',
          'content-disposition': 'attachment; filename="topics.json"',
          'content-language': 'en',
          'set-cookie': 'vendor=1',
          location: '/elsewhere',
        },
        body: '{"data":[]}',
      });
      const res = await get(ROUTES.documents.json, { 'cache-control': 'no-cache' });
      expect(res.status).toBe(200);
      expect(res.headers).toMatchObject({
        // A cached route's ETag is the gateway's own (it answers If-None-Match itself), never the vendor's.
        etag: etagOf(res.text),
        'last-modified': 'Tue, 02 Jan 2024 03:04:05 GMT',
        'content-disposition': 'attachment; filename="topics.json"',
        'content-language': 'en',
      });
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.headers.location).toBeUndefined();
    });

    it.each(upstreams.filter((u) => ROUTES[u].file))(
      '%s: a streamed file keeps its name and loses the key: filename="<key>.json"',
      async (u) => {
        vendor.script = (req) => ({
          headers: {
            'content-type': 'application/pdf',
            'content-disposition': `attachment; filename="${req.credential}.json"`,
            etag: `W/"${encodeURIComponent(req.credential)}"`,
            'set-cookie': `sid=${req.credential}`,
          },
          body: Buffer.alloc(2048, 0x41),
        });
        const res = await get(ROUTES[u].file);
        expect(res.status).toBe(200);
        expect(res.text).toBe('A'.repeat(2048));
        expect(res.headers['content-disposition']).toBe('attachment; filename="[REDACTED].json"');
        expect(res.headers['set-cookie']).toBeUndefined();
        expect(findForms(headerText(res), secrets())).toEqual([]);
      },
    );

    it.each(upstreams)('%s: a redirect or an error answer carries none of the vendor headers', async (u) => {
      for (const status of [302, 404, 500]) {
        vendor.script = (req) => ({
          status,
          headers: hostileHeaders(req.credential, vendor, req),
          body: '{}',
        });
        // A query of its own: no cached answer to serve stale in place of the error.
        const sep = ROUTES[u].json.includes('?') ? '&' : '?';
        const res = await get(`${ROUTES[u].json}${sep}probe=${status}`);
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.json().error).toBeDefined();
        expect(findForms(headerText(res) + res.text, secrets())).toEqual([]);
        for (const h of NEVER_PASSED) expect(res.headers[h]).toBeUndefined();
      }
    });
  });
});
