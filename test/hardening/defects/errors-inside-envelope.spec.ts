import { connect, type Socket } from 'node:net';
import { testConsumer } from '../../helpers/consumers.js';
import { startGateway, type GatewayHandle } from '../../helpers/gateway.js';

const BODY_LIMIT = 2048;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses the first HTTP/1.1 answer in `text` (Content-Length framed, as every gateway error is). */
function parseAnswer(text: string): RawAnswer | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const m = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const length = Number(headers['content-length']);
  const body = text.slice(end + 4, end + 4 + length);
  if (!(length >= 0) || Buffer.byteLength(body, 'latin1') < length) return undefined;
  return { status: Number(m[1]), headers, body };
}

/** The answer that follows the first one in `text`, once both are complete. */
function answersAfterFirst(text: string): RawAnswer | undefined {
  const first = parseAnswer(text);
  if (!first) return undefined;
  return parseAnswer(text.slice(text.indexOf('\r\n\r\n') + 4 + Buffer.byteLength(first.body, 'latin1')));
}

/** Writes `data` on a fresh socket (half-closing it), collects everything until the gateway closes. */
function exchange(base: string, data: string): Promise<string> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error('no answer in 5 s'));
    }, 5000);
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      // Enough once a whole answer is in (some answers keep the connection open).
      if (parseAnswer(Buffer.concat(chunks).toString('latin1'))) s.destroy();
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    s.end(data);
  });
}

/** The answer is the one envelope, with the x-request-id header that its requestId repeats. */
function expectEnvelope(text: string, status: number, code: string): RawAnswer {
  const answer = parseAnswer(text);
  expect(answer).toBeDefined();
  const a = answer!;
  expect(a.status).toBe(status);
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  const envelope = JSON.parse(a.body);
  expect(envelope.error).toMatchObject({ code, status });
  expect(typeof envelope.error.message).toBe('string');
  expect(a.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  expect(envelope.error.requestId).toBe(a.headers['x-request-id']);
  return a;
}

describe('every error answer is in the envelope', () => {
  const writer = testConsumer({ id: 'writer', upstreams: new Set(['macro']), write: true });
  let gw: GatewayHandle;

  beforeAll(async () => {
    gw = await startGateway({
      env: { ATRIUM_BODY_LIMIT_BYTES: String(BODY_LIMIT) },
      consumers: [writer.consumer],
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const get = (target: string, extra = '') => `GET ${target} HTTP/1.1\r\nHost: gw\r\n${extra}\r\n`;

  it.each<[string, string, number, string]>([
    ['a garbage request line', 'GARBAGE\r\n\r\n', 400, 'VALIDATION_FAILED'],
    [
      'a request line with an extra token',
      'GET /macro/feeds HTTP/1.1 x\r\nHost: gw\r\n\r\n',
      400,
      'VALIDATION_FAILED',
    ],
    ['an unknown HTTP version', 'GET /macro/feeds HTTP/7.0\r\nHost: gw\r\n\r\n', 400, 'VALIDATION_FAILED'],
    ['HTTP/2 prior knowledge', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 400, 'VALIDATION_FAILED'],
    ['invalid percent-encoding (%ff%fe)', get('/macro/%ff%fe'), 400, 'VALIDATION_FAILED'],
    ['invalid percent-encoding in a parameter', get('/macro/series/%ff%fe/data'), 400, 'VALIDATION_FAILED'],
    ['a broken escape (%zz)', get('/company/companies/%zz'), 400, 'VALIDATION_FAILED'],
    ['a NUL in the path', get('/macro/fe\u0000eds'), 400, 'VALIDATION_FAILED'],
    ['an oversize URL', get(`/macro/series/${'1'.repeat(70_000)}/data`), 414, 'URI_TOO_LONG'],
    ['an oversize query', get(`/macro/feeds?q=${'a'.repeat(70_000)}`), 414, 'URI_TOO_LONG'],
    ['an overlong path segment', get(`/macro/series/${'1'.repeat(20_000)}/data`), 414, 'URI_TOO_LONG'],
    ['an oversize header', get('/macro/feeds', `X-Big: ${'a'.repeat(70_000)}\r\n`), 431, 'HEADERS_TOO_LARGE'],
    [
      'too many headers',
      get('/macro/feeds', Array.from({ length: 3000 }, (_, i) => `X-H${i}: ${'b'.repeat(20)}\r\n`).join('')),
      431,
      'HEADERS_TOO_LARGE',
    ],
    ['a header with a bare CR', get('/macro/feeds', 'X-A: a\rb\r\n'), 400, 'VALIDATION_FAILED'],
    ['a header name with a space', get('/macro/feeds', 'X A: b\r\n'), 400, 'VALIDATION_FAILED'],
    [
      'Content-Length beside Transfer-Encoding',
      'POST /macro/feeds HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'VALIDATION_FAILED',
    ],
    [
      'two different Content-Lengths',
      'POST /macro/feeds HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!',
      400,
      'VALIDATION_FAILED',
    ],
    [
      'a broken chunk size',
      `POST /macro/feeds HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer {key}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n`,
      400,
      'VALIDATION_FAILED',
    ],
    ['no Host header', 'GET /macro/feeds HTTP/1.1\r\n\r\n', 400, 'VALIDATION_FAILED'],
    [
      'CONNECT',
      'CONNECT vendor.example:443 HTTP/1.1\r\nHost: vendor.example:443\r\n\r\n',
      405,
      'METHOD_NOT_ALLOWED',
    ],
    // RFC 9110 lets a server ignore an expectation it does not know: the request is answered as usual.
    ['an unknown Expect', get('/macro/feeds', 'Expect: x-unknown\r\n'), 401, 'UNAUTHENTICATED'],
  ])('%s: in the envelope with x-request-id', async (_name, request, status, code) => {
    const text = await exchange(gw.url, request.replace('{key}', writer.key));
    expectEnvelope(text, status, code);
    // Nothing of the request is echoed back (an overlong URL is not a 20 KB message).
    expect(text.length).toBeLessThan(2048);
  });

  it('an oversize URL refused by the parser carries the prefix members and the cap, in XML when the query asks', async () => {
    const json = expectEnvelope(
      await exchange(gw.url, get(`/macro/feeds?q=${'a'.repeat(70_000)}`)),
      414,
      'URI_TOO_LONG',
    );
    const envelope = JSON.parse(json.body);
    expect(envelope.error.message).toContain('at most 64 KiB');
    // The macro clients read `errors` beside `error`, as on every other refusal under /macro.
    expect(envelope.errors).toMatchObject({ status: 414, code: 'URI_TOO_LONG' });
    const xml = parseAnswer(await exchange(gw.url, get(`/macro/feeds?format=xml&q=${'a'.repeat(70_000)}`)));
    expect(xml?.status).toBe(414);
    expect(xml?.headers['content-type']).toMatch(/^application\/xml/);
    expect(xml?.body).toContain('<code>URI_TOO_LONG</code>');
    expect(xml?.body).toContain('<errors>');
    expect(xml?.body).toContain(`<requestId>${xml?.headers['x-request-id']}</requestId>`);
  });

  it('an answer after a pipelined request stays behind the answer to it', async () => {
    const text = await exchange(gw.url, get('/health/live') + 'GARBAGE\r\n\r\n');
    expect(parseAnswer(text)?.status).toBe(200);
    const second = answersAfterFirst(text);
    expect(second).toBeDefined();
    expectEnvelope(text.slice(text.indexOf('HTTP/1.1 400')), 400, 'VALIDATION_FAILED');
  });

  /**
   * Sends a POST declaring `total` bytes and writes them as fast as the socket takes them, reading
   * concurrently; resolves with what was read, whether every byte was written, and the first error.
   */
  function postOverLimit(
    total: number,
    after?: string,
  ): Promise<{
    text: string;
    wrote: number;
    wroteAtEnd: number;
    error?: string;
    endedFirst: boolean;
    socket: Socket;
  }> {
    const { port } = new URL(gw.url);
    return new Promise((resolve) => {
      const s = connect(Number(port), '127.0.0.1');
      const chunks: Buffer[] = [];
      let wrote = 0;
      let error: string | undefined;
      let ended = false;
      let endedFirst = false;
      let wroteAtEnd = -1;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('latin1');
        resolve({ text, wrote, wroteAtEnd, error, endedFirst, socket: s });
      };
      const timer = setTimeout(finish, 15_000);
      s.on('data', (d: Buffer) => {
        chunks.push(d);
        // With a follow-up request: done once its answer is in too.
        if (after && answersAfterFirst(Buffer.concat(chunks).toString('latin1'))) finish();
      });
      s.on('end', () => {
        ended = true;
        wroteAtEnd = wrote;
        if (!error) endedFirst = true;
        finish();
      });
      s.on('error', (e) => {
        error ??= (e as NodeJS.ErrnoException).code ?? e.message;
        if (!ended) finish();
      });
      s.on('close', finish);
      s.write(
        `POST /macro/feeds HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${writer.key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`,
      );
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (wrote < total && !ended && !s.destroyed) {
          const n = Math.min(chunk.length, total - wrote);
          wrote += n;
          if (!s.write(chunk.subarray(0, n))) {
            s.once('drain', pump);
            return;
          }
        }
        if (wrote >= total && after && !s.destroyed) s.write(after);
      };
      pump();
    });
  }

  it('a body declared over the limit: the client writes it all, reads the 413, and may reuse the connection', async () => {
    const total = 8 * 1024 * 1024;
    const r = await postOverLimit(total, get('/health/live'));
    r.socket.destroy();
    expect(r.error).toBeUndefined();
    expect(r.wrote).toBe(total);
    const first = expectEnvelope(r.text, 413, 'PAYLOAD_TOO_LARGE');
    expect(first.headers.connection).not.toBe('close');
    // The same connection answers the next request.
    expect(answersAfterFirst(r.text)?.status).toBe(200);
  });

  it('a body far over any bound: the client reads the 413, then the gateway hangs up gracefully (FIN, not a reset)', async () => {
    const r = await postOverLimit(1024 * 1024 * 1024);
    r.socket.destroy();
    expectEnvelope(r.text, 413, 'PAYLOAD_TOO_LARGE');
    expect(r.endedFirst).toBe(true);
    // It read and dropped a good part first (16 MiB), not hung up on the writer at once.
    expect(r.wroteAtEnd).toBeGreaterThanOrEqual(16 * 1024 * 1024);
    // And it stopped reading long before the declared gigabyte.
    expect(r.wrote).toBeLessThan(256 * 1024 * 1024);
  });
});
