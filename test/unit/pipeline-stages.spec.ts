import { createServer, type Server } from 'node:http';
import { settled } from '../helpers/answer.js';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { SecretRedactor } from '../../src/core/logging/secret-redactor.js';
import { compose } from '../../src/proxy/compose.js';
import type { Handler, ProxyRequest, RouteDefinition, Stage } from '../../src/proxy/pipeline.types.js';
import { credentialsStage } from '../../src/proxy/stages/credentials.stage.js';
import { keyEchoStage } from '../../src/proxy/stages/key-echo.stage.js';
import {
  isValidBody,
  looksLikeJson,
  looksLikeXml,
  normalizeStage,
} from '../../src/proxy/stages/normalize.stage.js';
import { UndiciTransport } from '../../src/proxy/transport/undici.transport.js';

const route: RouteDefinition = { id: 't.get', method: 'GET', path: '/x', family: 'x' };

function req(partial: Partial<ProxyRequest> = {}): ProxyRequest {
  return {
    upstream: 't',
    route,
    method: 'GET',
    path: '/x',
    query: [],
    headers: {},
    consumerId: 'c',
    requestId: 'r',
    format: 'json',
    credentialId: 'cred',
    deadline: Date.now() + 2000,
    noCache: false,
    weight: 1,
    ...partial,
  };
}

describe('compose', () => {
  it('runs stages outermost first and the terminal last', async () => {
    const seen: string[] = [];
    const mk =
      (name: string): Stage =>
      (next) =>
      async (r) => {
        seen.push(name);
        return next(r);
      };
    const terminal: Handler = async () => {
      seen.push('terminal');
      return { status: 200, headers: {}, body: Buffer.from('ok') };
    };
    await compose([mk('a'), mk('b')], terminal)(req());
    expect(seen).toEqual(['a', 'b', 'terminal']);
  });
});

describe('credentialsStage', () => {
  const secret = 'upstream-secret-123456';
  const credentials = {
    id: 'token:abc',
    inject: (r: ProxyRequest) => void r.query.push(['token', secret]),
    secrets: () => [secret],
  };

  it('strips every consumer key position and injects ours last', async () => {
    let seen: ProxyRequest | undefined;
    const h = credentialsStage({
      credentials,
      stripParams: ['token', 'sessionId'],
      stripHeaders: ['authorization', 'x-api-key'],
    })(async (r) => {
      seen = r;
      return { status: 200, headers: {}, body: Buffer.from('{}') };
    });
    await h(
      req({
        query: [
          ['TOKEN', 'consumer'],
          ['a', '1'],
          ['sessionid', 'consumer'],
          ['token[0]', 'consumer'],
        ],
        headers: { authorization: 'Bearer consumer', 'x-api-key': 'consumer', accept: 'application/json' },
      }),
    );
    expect(seen!.query).toEqual([
      ['a', '1'],
      ['token', secret],
    ]);
    expect(seen!.headers).toEqual({ accept: 'application/json' });
  });

  it('retries once after the credential refreshes on an upstream auth failure', async () => {
    let calls = 0;
    let refreshed = 0;
    const stage = credentialsStage({
      credentials: { ...credentials, onAuthFailure: async () => ++refreshed === 1 },
      stripParams: ['token'],
      stripHeaders: [],
    });
    const h = stage(async (r) => {
      calls++;
      expect(r.query.filter(([k]) => k === 'token')).toHaveLength(1);
      if (calls === 1) throw new GatewayError('UPSTREAM_AUTH_FAILED');
      return { status: 200, headers: {}, body: Buffer.from('{}') };
    });
    await expect(h(req({ query: [['token', 'consumer']] }))).resolves.toMatchObject({ status: 200 });
    expect(calls).toBe(2);
  });
});

describe('keyEchoStage', () => {
  const secret = 'upstream-secret-123456';
  const redactor = new SecretRedactor();
  redactor.register(secret);
  const secrets = [secret];

  it('scrubs an echo of our key from the body, the headers and error messages', async () => {
    const scrubs: number[] = [];
    const stage = keyEchoStage({
      secrets: () => secrets,
      redact: (t) => redactor.redact(t),
      onScrub: (n) => scrubs.push(n),
    });
    const ok = await stage(async () => ({
      status: 200,
      headers: {
        'content-type': 'application/json',
        'content-disposition': `attachment; filename="${secret}.json"`,
      },
      body: Buffer.from(`{"t":"${secret}","u":"${secret}"}`),
    }))(req());
    expect((ok.body as Buffer).toString()).toBe('{"t":"[REDACTED]","u":"[REDACTED]"}');
    expect(ok.headers['content-disposition']).toBe('attachment; filename="[REDACTED].json"');
    await expect(
      stage(async () => {
        throw new GatewayError('UPSTREAM_BAD_REQUEST', { message: `bad token ${secret}` });
      })(req()),
    ).rejects.toThrow('bad token [REDACTED]');
    expect(scrubs).toEqual([1, 2, 1]);
  });

  it('passes a clean answer on as the same object, its body not copied', async () => {
    const res = { status: 200, headers: { etag: '"v1"' }, body: Buffer.from('{"clean":true}') };
    const out = await keyEchoStage({ secrets: () => secrets, redact: (t) => t })(async () => res)(req());
    expect(out).toBe(res);
  });
});

describe('looksLikeJson', () => {
  it.each([
    ['{"a":1}', true],
    [' [1] \n', true],
    ['{"a":', false],
    ['<html>', false],
    ['', false],
    ['\ufeff{"a":1}', true],
  ])('%j → %s', (s, ok) => expect(looksLikeJson(Buffer.from(s))).toBe(ok));
});

describe('looksLikeXml', () => {
  it.each([
    ['<a/>', true],
    ['\ufeff <?xml version="1.0"?><a>1</a>\n', true],
    ['<a>1</a', false],
    ['{"a":1}', false],
    ['', false],
  ])('%j → %s', (s, ok) => expect(looksLikeXml(Buffer.from(s))).toBe(ok));
});

describe('isValidBody (what may be cached)', () => {
  it.each<[string, 'json' | 'xml', boolean]>([
    ['{"a":[1,2]}', 'json', true],
    ['\ufeff {"a":"ü"} ', 'json', true],
    ['{"a":[1,2,]}', 'json', false],
    ['{"a":1}{"b":2}', 'json', false],
    ['<html><body>down</body></html>', 'json', false],
    ['<?xml version="1.0"?><r><a>1</a></r>', 'xml', true],
    ['<?xml version="1.0"?><r><a>1</a>', 'xml', false],
    ['<html><p>one<p>two</html>', 'xml', false],
    ['{"a":1}', 'xml', false],
    ['   ', 'json', false],
  ])('%j as %s → %s', (s, format, ok) => expect(isValidBody(Buffer.from(s), format)).toBe(ok));
});

describe('transport + normalize against misbehaving servers', () => {
  let server: Server;
  let base: string;
  let mode = 'ok';
  beforeAll(async () => {
    server = createServer((rq, rs) => {
      if (mode === 'reset') return rq.socket.destroy();
      if (mode === 'hang') return;
      if (mode === 'big') {
        rs.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        for (let i = 0; i < 40; i++) rs.write(chunk);
        return rs.end('{}');
      }
      if (mode === 'file-stall') {
        // A file answered as JSON (maybe an EMIS error on 200) whose head never completes.
        rs.writeHead(200, { 'content-type': 'application/json' });
        rs.write('{"data":');
        return;
      }
      if (mode === 'malformed') {
        rs.writeHead(200, { 'content-type': 'application/json' });
        return rs.end('{"data":[1,2');
      }
      if (mode === '429') {
        rs.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
        return rs.end('{"errors":{"code":"TOO_MANY","message":"slow down"}}');
      }
      if (mode === '401') {
        rs.writeHead(401, { 'content-type': 'application/json' });
        return rs.end('{"errors":{"code":"BAD_KEY"}}');
      }
      if (mode === '500html') {
        rs.writeHead(500, { 'content-type': 'text/html' });
        return rs.end('<html>oops</html>');
      }
      rs.writeHead(200, {
        'content-type': 'application/json',
        'set-cookie': 'a=b',
        connection: 'keep-alive',
      });
      rs.end('{"data":[]}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  function pipeline(baseUrl = base, timeout = 300) {
    const transport = new UndiciTransport({
      upstream: 't',
      title: 'the test service',
      baseUrl,
      connections: 4,
      keepAliveTimeoutMs: 1000,
      connectTimeoutMs: 300,
      headersTimeoutMs: timeout,
      bodyTimeoutMs: timeout,
      maxResponseBytes: 1024 * 1024,
    });
    const mapper = {
      read: (_s: number, body: Buffer) => {
        try {
          const e = JSON.parse(body.toString()).errors;
          return { upstreamCode: e.code, message: e.message };
        } catch {
          return {};
        }
      },
    };
    const h = normalizeStage({
      upstream: 't',
      title: 'the test service',
      mapper,
      defaultRetryAfterSeconds: 30,
    })(transport.handler);
    return { h, transport };
  }

  const cases: Array<[string, string, number, string | undefined]> = [
    ['reset', 'UPSTREAM_UNAVAILABLE', 503, 'ECONNRESET'],
    ['hang', 'UPSTREAM_TIMEOUT', 504, undefined],
    ['big', 'RESPONSE_TOO_LARGE', 429, 'RESPONSE_TOO_LARGE'],
    ['malformed', 'UPSTREAM_ERROR', 502, 'INVALID_BODY'],
    ['401', 'UPSTREAM_AUTH_FAILED', 502, 'BAD_KEY'],
    ['500html', 'UPSTREAM_ERROR', 502, undefined],
  ];
  it.each(cases)('%s → %s %d', async (m, code, status, upstreamCode) => {
    mode = m;
    const { h, transport } = pipeline();
    try {
      const err = await settled(h, req()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).code).toBe(code);
      expect((err as GatewayError).status).toBe(status);
      expect((err as GatewayError).upstreamCode).toBe(upstreamCode);
    } finally {
      await transport.close();
    }
  });

  it('429 → UPSTREAM_RATE_LIMITED with the upstream Retry-After', async () => {
    mode = '429';
    const { h, transport } = pipeline();
    try {
      await expect(h(req())).rejects.toMatchObject({
        code: 'UPSTREAM_RATE_LIMITED',
        retryAfterSeconds: 7,
        upstreamCode: 'TOO_MANY',
      });
    } finally {
      await transport.close();
    }
  });

  it('a structured file whose head stalls → UPSTREAM_TIMEOUT at the deadline, not at the idle timeout', async () => {
    mode = 'file-stall';
    const { transport } = pipeline(base, 5000);
    const h = normalizeStage({
      upstream: 't',
      title: 'the test service',
      mapper: { read: () => ({}), isErrorBody: () => false },
    })(transport.handler);
    try {
      const started = Date.now();
      await expect(
        h(req({ route: { ...route, file: true }, deadline: Date.now() + 400 })),
      ).rejects.toMatchObject({ code: 'UPSTREAM_TIMEOUT', status: 504 });
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      await transport.close();
    }
  });

  it('refused → UPSTREAM_UNAVAILABLE 503', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const { h, transport } = pipeline(`http://127.0.0.1:${port}`);
    try {
      await expect(h(req())).rejects.toMatchObject({
        code: 'UPSTREAM_UNAVAILABLE',
        status: 503,
        upstreamCode: 'ECONNREFUSED',
      });
    } finally {
      await transport.close();
    }
  });

  it('passes a success through with only the headers a client needs', async () => {
    mode = 'ok';
    const { h, transport } = pipeline(`${base}/v2`);
    try {
      const res = await h(req());
      expect(res.status).toBe(200);
      expect(res.headers).toEqual({ 'content-type': 'application/json' });
      expect((res.body as Buffer).toString()).toBe('{"data":[]}');
    } finally {
      await transport.close();
    }
  });
});
