import { request } from 'undici';
import type { GatewaySandbox as Sandbox } from '../../src/sandbox-env.js';
import { startSandbox } from '../../src/sandbox/start-sandbox.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';

// The vendors' web stacks (PHP for EMIS, Java for the others) answer HEAD as GET without a body; so do the
// fakes, so a HEAD against a fake says what the vendor would (it used to be a 405 or an EMIS error).

describe('every fake answers HEAD as GET, without a body', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(UPSTREAMS);
  });
  afterAll(() => sandbox?.close());

  const send = async (method: 'GET' | 'HEAD', url: string) => {
    const res = await request(url, { method });
    const body = await res.body.text();
    return {
      status: res.statusCode,
      type: res.headers['content-type'],
      length: res.headers['content-length'],
      body: body.length,
    };
  };

  it.each([
    ['macro', (s: Sandbox) => `${s.macro.url}/series/310112/data?token=${s.credentials.macro.token}`],
    ['macro file', (s: Sandbox) => `${s.macro.url}/series/310112/visual?token=${s.credentials.macro.token}`],
    ['company', (s: Sandbox) => `${s.company.url}/dictionary/countries?token=${s.credentials.company.token}`],
    [
      'documents',
      (s: Sandbox) => `${s.documents.url}/Dictionary/getTopics/?token=${s.credentials.documents.token}`,
    ],
    [
      'documents file',
      (s: Sandbox) =>
        `${s.documents.url}/Search/getFile/?key=F88002-1&token=${s.credentials.documents.token}`,
    ],
    [
      'deals',
      (s: Sandbox) => `${s.deals.url}/SearchDeal/getDeals/?limit=1&token=${s.credentials.deals.token}`,
    ],
  ])('%s', async (_name, urlOf) => {
    const url = urlOf(sandbox);
    const get = await send('GET', url);
    const head = await send('HEAD', url);
    expect(get.status).toBe(200);
    expect(get.body).toBeGreaterThan(0);
    expect(head).toEqual({ ...get, body: 0 });
  });
});
