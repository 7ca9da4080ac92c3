import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request as undiciRequest } from 'undici';
import { CompressedForms } from '../../src/core/http/compression.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { withGateway } from '../helpers/gateway.js';

const UPSTREAM_TOKEN = 'sbx_macro_compress_secret_93f0';

/** The raw bytes on the wire (undici does not decode `Content-Encoding`). */
async function wire(url: string, headers: Record<string, string>) {
  const res = await undiciRequest(url, { headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) h[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return { status: res.statusCode, headers: h, body };
}

describe('compression of JSON and XML answers', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: { UPSTREAM_MACRO_RETRY_ATTEMPTS: '1' },
    consumers: [reader],
  });
  const get = (path: string, headers: Record<string, string> = {}) =>
    wire(gw.url + path, { authorization: `Bearer ${reader.key}`, ...headers });
  const SERIES = '/macro/series/310112/data';

  it('brotli or gzip by Accept-Encoding, the same bytes once decoded, Vary: Accept-Encoding every time', async () => {
    const plain = await get(SERIES);
    expect(plain.status).toBe(200);
    expect(plain.body.length).toBeGreaterThan(1024);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/accept-encoding/i);

    const br = await get(SERIES, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    expect(br.body.length).toBeLessThan(plain.body.length / 2);

    const gz = await get(SERIES, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
    // The validator describes the answer, whatever its encoding on the wire.
    expect(new Set([plain.headers.etag, br.headers.etag, gz.headers.etag]).size).toBe(1);
  });

  it('a cached answer is compressed once per encoding: later hits send the kept form', async () => {
    // A series no other test here asks for: its forms are made in this test.
    const TABLE = '/macro/series/310113/data';
    const { counts } = gw.app.get(CompressedForms);
    const before = { ...counts };
    const first = await get(TABLE, { 'accept-encoding': 'br' });
    const hit = await get(TABLE, { 'accept-encoding': 'gzip;q=0.5, br' });
    const gz = await get(TABLE, { 'accept-encoding': 'gzip' });
    const gzHit = await get(TABLE, { 'accept-encoding': 'x-gzip' });
    expect([first, hit, gz, gzHit].map((r) => r.headers['content-encoding'])).toEqual([
      'br',
      'br',
      'gzip',
      'gzip',
    ]);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.body.equals(first.body)).toBe(true);
    expect(gzHit.body.equals(gz.body)).toBe(true);
    expect(Number(hit.headers['content-length'])).toBe(hit.body.length);
    expect(hit.headers.vary).toMatch(/accept-encoding/i);
    expect(brotliDecompressSync(hit.body).toString()).toBe(gunzipSync(gzHit.body).toString());
    expect(counts.kept - before.kept).toBe(2);
    expect(counts.reused - before.reused).toBe(2);
  });

  it('small answers and unaccepted encodings go as they are', async () => {
    const small = await get('/macro/series/310112?fields=data[].id', { 'accept-encoding': 'br, gzip' });
    expect(small.status).toBe(200);
    expect(small.body.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    const identity = await get(SERIES, { 'accept-encoding': 'identity' });
    expect(identity.headers['content-encoding']).toBeUndefined();
    const deflateOnly = await get(SERIES, { 'accept-encoding': 'deflate' });
    expect(deflateOnly.headers['content-encoding']).toBeUndefined();
  });

  it('a view answer is compressed too', async () => {
    const view = await get('/views/series-overview?id=310112', { 'accept-encoding': 'br' });
    expect(view.status).toBe(200);
    expect(view.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(view.body).toString()).complete).toBe(true);
  });

  it('a streamed file passes through as the vendor sent it, JSON or not', async () => {
    const json = JSON.stringify({ rows: Array.from({ length: 400 }, (_, i) => ({ i, v: 'x'.repeat(20) })) });
    fake.behave({ failWith: { status: 200, body: json, headers: { 'content-type': 'application/json' } } });
    const file = await get('/macro/series/310112/visual', { 'accept-encoding': 'br, gzip' });
    expect(file.status).toBe(200);
    expect(file.headers['content-encoding']).toBeUndefined();
    expect(file.body.toString()).toBe(json);
  });
});

// `npm start` builds the app with NestFactory.create, which adds the routes before configureApp runs: the
// plugin must decorate them all the same.
describe('compression in the gateway process (node dist/main.js)', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    consumers: [reader],
    mode: 'process',
  });

  it('compresses a proxied answer and a view', async () => {
    for (const path of ['/macro/series/310112/data', '/views/series-overview?id=310112']) {
      const res = await wire(gw.url + path, {
        authorization: `Bearer ${reader.key}`,
        'accept-encoding': 'br',
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.headers.vary).toMatch(/accept-encoding/i);
    }
  });
});
