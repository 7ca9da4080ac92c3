import { XMLParser } from 'fast-xml-parser';
import { request } from 'undici';
import { testConsumer } from '../../helpers/consumers.js';
import { http, startGateway, type GatewayHandle } from '../../helpers/gateway.js';
import { RawVendor } from '../../helpers/raw-vendor.js';

const TOKEN = 'sbx_test_hardening_07_vendor_c2a9';

interface Garbage {
  type: string;
  body: string;
}

const VALID_JSON: Garbage = { type: 'application/json; charset=utf-8', body: '{"data":[{"id":1}]}' };
const VALID_XML: Garbage = {
  type: 'application/xml',
  body: '<?xml version="1.0" encoding="UTF-8"?><response><data><id>1</id></data></response>',
};

describe('garbage is neither served nor cached as 200', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  let vendor: RawVendor;
  let gw: GatewayHandle;
  /** What the vendor answers with 200, per path. */
  const answers = new Map<string, Garbage>();

  beforeAll(async () => {
    vendor = await new RawVendor().start();
    vendor.handler = (req, res) => {
      const a = answers.get(new URL(req.url ?? '/', 'http://v').pathname) ?? VALID_JSON;
      res.writeHead(200, { 'content-type': a.type, 'content-length': Buffer.byteLength(a.body) });
      res.end(a.body);
    };
    gw = await startGateway({
      env: {
        UPSTREAM_MACRO_BASE_URL: vendor.url,
        UPSTREAM_MACRO_TOKEN: TOKEN,
        UPSTREAM_MACRO_BREAKER_MIN_SAMPLE: '1000',
      },
      consumers: [reader.consumer],
    });
  });
  afterAll(async () => {
    await gw?.close();
    await vendor?.close();
  });
  beforeEach(() => vendor.reset());

  const get = (path: string) => http(gw.url + path, { headers: { authorization: `Bearer ${reader.key}` } });

  it.each<[string, string, Garbage, Garbage]>([
    [
      'an HTML page sent as text/html on a JSON route',
      '/series/71',
      {
        type: 'text/html; charset=utf-8',
        body: '<!DOCTYPE html><html><body><h1>Maintenance</h1></body></html>',
      },
      VALID_JSON,
    ],
    [
      'invalid JSON that starts with { and ends with }',
      '/series/72',
      { type: 'application/json', body: '{"data":[{"id":1},{"id":2,}]}' },
      VALID_JSON,
    ],
    [
      'valid JSON under a content type the route does not serve',
      '/series/73',
      { type: 'text/html', body: '{"data":[{"id":1}]}' },
      VALID_JSON,
    ],
    [
      'truncated XML when XML was asked for',
      '/series/74?format=xml',
      { type: 'application/xml', body: '<?xml version="1.0"?><response><data><id>1</id><name>Hun</name>' },
      VALID_XML,
    ],
    [
      'JSON when XML was asked for',
      '/series/75?format=xml',
      { type: 'application/json', body: '{"data":[{"id":1}]}' },
      VALID_XML,
    ],
  ])('%s: 502 UPSTREAM_ERROR, never stored', async (_name, path, garbage, valid) => {
    const vendorPath = path.split('?')[0];
    answers.set(vendorPath, garbage);
    const bad = await get('/macro' + path);
    expect(bad.status).toBe(502);
    // The envelope comes in the format asked for.
    const body = path.includes('format=xml') ? new XMLParser().parse(bad.text).response : bad.json();
    expect(body.error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      status: 502,
      upstream: 'macro',
      upstreamStatus: 200,
      upstreamCode: 'INVALID_BODY',
    });
    expect(bad.headers['x-request-id']).toBe(body.error.requestId);
    expect(bad.text).not.toContain(garbage.body);
    expect(vendor.requests).toHaveLength(1);

    // The vendor recovers: the repeat is a fresh call (MISS), not the garbage from the cache.
    answers.set(vendorPath, valid);
    const good = await get('/macro' + path);
    expect(good.status).toBe(200);
    expect(good.headers['x-cache']).toBe('MISS');
    expect(good.text).toBe(valid.body);
    expect(vendor.requests).toHaveLength(2);

    // A valid answer is cached as before.
    const again = await get('/macro' + path);
    expect(again.status).toBe(200);
    expect(again.headers['x-cache']).toBe('HIT');
    expect(again.text).toBe(valid.body);
    expect(vendor.requests).toHaveLength(2);
  });

  it('valid answers pass byte for byte, a UTF-8 byte-order mark included', async () => {
    const bom = { type: 'application/json', body: '\ufeff{"data":[{"id":"ü"}]}' };
    answers.set('/series/76', bom);
    const res = await request(gw.url + '/macro/series/76', {
      headers: { authorization: `Bearer ${reader.key}` },
    });
    expect(res.statusCode).toBe(200);
    expect(Buffer.from(await res.body.arrayBuffer())).toEqual(Buffer.from(bom.body));
  });
});
