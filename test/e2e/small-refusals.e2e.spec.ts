import { connect } from 'node:net';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, withGateway } from '../helpers/gateway.js';

const UPSTREAM_TOKEN = 'sbx_macro_small_refusals_secret_5d2e';
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE}-00f067aa0ba902b7-01`;

/** Writes raw bytes and reads the whole answer (the gateway closes after a parser refusal). */
function rawExchange(url: string, bytes: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (data += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: rest.join('\r\n\r\n') });
    });
    socket.end(bytes);
  });
}

describe('the small refusals a page meets', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']), write: true });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: { ATRIUM_BODY_LIMIT_BYTES: String(64 * 1024) },
    consumers: [reader],
  });
  const auth = () => ({ authorization: `Bearer ${reader.key}` });

  it('413 carries the traceId and states the limit', async () => {
    const res = await http(gw.url + '/macro/feeds', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', traceparent: TRACEPARENT },
      body: JSON.stringify({ name: 'x'.repeat(80 * 1024) }),
    });
    expect(res.status).toBe(413);
    const { error } = res.json();
    expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', traceId: TRACE });
    expect(error.message).toContain(String(64 * 1024));
    expect(fake.requests).toHaveLength(0);
  });

  it('414 from the parser and from the router carry a traceId and the limit', async () => {
    const parser = await rawExchange(
      gw.url,
      `GET /macro/feeds?q=${'a'.repeat(70 * 1024)} HTTP/1.1\r\nHost: x\r\ntraceparent: ${TRACEPARENT}\r\n\r\n`,
    );
    expect(parser.status).toBe(414);
    const p = JSON.parse(parser.body).error;
    expect(p.code).toBe('URI_TOO_LONG');
    expect(p.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(p.message).toContain('64 KiB');

    const router = await http(`${gw.url}/macro/series/${'1'.repeat(17 * 1024)}`, {
      headers: { ...auth(), traceparent: TRACEPARENT },
    });
    expect(router.status).toBe(414);
    expect(router.json().error).toMatchObject({ code: 'URI_TOO_LONG', traceId: TRACE });
    expect(router.json().error.message).toContain('16,384');
  });

  it('the parser 414 is the envelope with the errors member, in XML when Accept asks for it', async () => {
    const request = (accept: string) =>
      `GET /macro/feeds?q=${'a'.repeat(66 * 1024)} HTTP/1.1\r\nHost: x\r\nAccept: ${accept}\r\n\r\n`;
    const xml = await rawExchange(gw.url, request('application/xml'));
    expect(xml.status).toBe(414);
    expect(xml.body).toMatch(/^<\?xml/);
    expect(xml.body).toContain('<code>URI_TOO_LONG</code>');
    expect(xml.body).toContain('<errors>');
    expect(xml.body).toContain('64 KiB');
    const json = await rawExchange(gw.url, request('application/json'));
    expect(json.status).toBe(414);
    expect(JSON.parse(json.body)).toMatchObject({
      error: { code: 'URI_TOO_LONG', status: 414 },
      errors: { status: 414, code: 'URI_TOO_LONG' },
    });
    expect(fake.requests).toHaveLength(0);
  });

  it("431 carries the client's traceId and the limit", async () => {
    const res = await rawExchange(
      gw.url,
      `GET /macro/feeds HTTP/1.1\r\nHost: x\r\ntraceparent: ${TRACEPARENT}\r\nx-big: ${'b'.repeat(70 * 1024)}\r\n\r\n`,
    );
    expect(res.status).toBe(431);
    const { error } = JSON.parse(res.body);
    expect(error).toMatchObject({ code: 'HEADERS_TOO_LARGE', traceId: TRACE });
    expect(error.message).toContain('64 KiB');
  });

  it('a plain OPTIONS is a 204 with Allow (no key needed, nothing forwarded); an unknown path stays a 404', async () => {
    const res = await http(gw.url + '/macro/feeds', { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.allow?.split(', ')).toEqual(expect.arrayContaining(['GET', 'POST', 'OPTIONS']));
    expect(res.text).toBe('');
    const unknown = await http(gw.url + '/macro/no/such/route', { method: 'OPTIONS' });
    expect(unknown.status).toBe(404);
    expect(fake.requests).toHaveLength(0);
  });

  it('POST /batch refuses a body that is not JSON with 415 in the envelope', async () => {
    const body = JSON.stringify({ requests: [{ path: '/macro/feeds?limit=1' }] });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
      const res = await http(gw.url + '/batch', {
        method: 'POST',
        headers: { ...auth(), ...(type ? { 'content-type': type } : {}) },
        body,
      });
      expect(res.status).toBe(415);
      expect(res.json().error).toMatchObject({ code: 'UNSUPPORTED_FORMAT', parameter: 'Content-Type' });
    }
    expect(fake.requests).toHaveLength(0);
    const ok = await http(gw.url + '/batch', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json; charset=utf-8' },
      body,
    });
    expect(ok.status).toBe(200);
  });
});
