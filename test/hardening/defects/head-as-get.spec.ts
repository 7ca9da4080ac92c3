import { testConsumer } from '../../helpers/consumers.js';
import { startGateway, type GatewayHandle } from '../../helpers/gateway.js';
import { call } from '../../helpers/gateway-client.js';
import { ScriptedUpstream, sendJson, sendText } from '../../helpers/scripted-upstream.js';

// HEAD is GET without a body: the same status and headers, the vendor asked with GET (a vendor's HEAD
// answer has no body, and an empty body where JSON was expected is no valid answer), nothing cached wrong.

describe('HEAD answers as GET does, without a body', () => {
  const app = testConsumer({ id: 'head-app' });
  const auth = { authorization: `Bearer ${app.key}` };
  const vendor = new ScriptedUpstream((c) => {
    const p = c.recorded.path;
    if (p.endsWith('/visual') || p.includes('getFile'))
      return sendText(c.res, 200, 'a,b\n1,2\n', { 'content-type': 'text/csv' });
    // A vendor answering HEAD as HTTP says: the headers of its GET, no body.
    if (c.recorded.method === 'HEAD') {
      c.res.writeHead(200, { 'content-type': 'application/json', 'content-length': '27' });
      c.res.end();
      return;
    }
    sendJson(c.res, 200, { data: [{ id: p.slice(-6) }] });
  });
  let gw: GatewayHandle;
  let n = 700_000 + Math.floor(Math.random() * 100_000);

  beforeAll(async () => {
    await vendor.start();
    gw = await startGateway({
      env: {
        UPSTREAM_MACRO_BASE_URL: `${vendor.origin}/v2`,
        UPSTREAM_MACRO_TOKEN: 'sbx_test_head_macro_0123456789',
        UPSTREAM_DOCUMENTS_BASE_URL: `${vendor.origin}/news`,
        UPSTREAM_DOCUMENTS_TOKEN: 'sbx_test_head_documents_0123456789',
      },
      consumers: [app.consumer],
    });
  });

  afterAll(async () => {
    await gw?.close();
    await vendor.close();
  });

  it.each([
    ['a JSON answer, HEAD first (a miss)', () => `/macro/series/${++n}`, 'head-first'],
    ['a JSON answer, GET first (HEAD is then a hit)', () => `/macro/series/${++n}`, 'get-first'],
    ['a streamed file', () => `/macro/series/${++n}/visual`, 'head-first'],
    ['an EMIS file', () => `/documents/Search/getFile/?key=${++n}`, 'head-first'],
  ])('%s', async (_name, path, order) => {
    const p = path();
    const before = vendor.requests.length;
    const head = async () => call(gw.url + p, { method: 'HEAD', headers: auth });
    const get = async () => call(gw.url + p, { headers: auth });
    const [first, second] =
      order === 'head-first' ? [await head(), await get()] : [await get(), await head()];
    const [h, g] = order === 'head-first' ? [first, second] : [second, first];
    expect({ status: h.status, body: h.body.length }).toEqual({ status: g.status, body: 0 });
    expect(g.status).toBe(200);
    expect(h.headers['content-type']).toBe(g.headers['content-type']);
    const asked = vendor.requests.slice(before).map((r) => r.method);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((m) => m === 'GET')).toBe(true);
  });
});
