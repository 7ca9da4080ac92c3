import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../../src/core/errors/gateway-error.js';
import type { ProxyRequest } from '../../src/proxy/pipeline.types.js';
import { normalizeStage } from '../../src/proxy/stages/normalize.stage.js';
import { UndiciTransport } from '../../src/proxy/transport/undici.transport.js';
import { settled } from '../helpers/answer.js';
import { GET_ROUTE, proxyRequest } from '../helpers/proxy-request.js';

// The transport and the normalize stage over real HTTP, against a loopback server that misbehaves on cue.

/** A pipeline request with a short deadline. */
const req = (partial: Partial<ProxyRequest> = {}): ProxyRequest =>
  proxyRequest({ deadline: Date.now() + 2000, ...partial });

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
        h(req({ route: { ...GET_ROUTE, file: true }, deadline: Date.now() + 400 })),
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
