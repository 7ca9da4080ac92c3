import { Readable } from 'node:stream';
import { settled } from '../helpers/answer.js';
import { GatewayError } from '../../src/core/errors/gateway-error.js';
import type { ProxyRequest } from '../../src/proxy/pipeline.types.js';
import { normalizeStage } from '../../src/proxy/stages/normalize.stage.js';
import type { TransportResponse } from '../../src/proxy/transport/undici.transport.js';
import { emisErrorMapper } from '../../src/upstreams/shared/emis-error.mapper.js';

/** A file route that answers 2xx with JSON may carry an EMIS error (HTTP 200): the normaliser peeks. */
describe('normalize: file answers that are EMIS errors on HTTP 200', () => {
  const stage = normalizeStage({
    upstream: 'documents',
    title: 'the document service',
    mapper: emisErrorMapper,
    defaultRetryAfterSeconds: 30,
  });
  const req = { format: 'json', route: { file: true } } as unknown as ProxyRequest;
  const answer = (contentType: string, chunks: Buffer[]) =>
    stage(
      async () =>
        ({
          status: 200,
          headers: { 'content-type': contentType },
          body: Readable.from(chunks),
          upstreamHeaders: {},
        }) satisfies TransportResponse,
    )(req);
  const drain = async (body: Buffer | Readable): Promise<Buffer> => {
    if (Buffer.isBuffer(body)) return body;
    const parts: Buffer[] = [];
    for await (const c of body) parts.push(c as Buffer);
    return Buffer.concat(parts);
  };

  it('an ApiError body becomes the matching GatewayError', async () => {
    const err = await answer('application/json', [
      Buffer.from('{"errors":[{"code":3004,'),
      Buffer.from('"detail":"File not found: X"}]}'),
    ]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ code: 'NOT_FOUND', upstreamCode: 3004, upstreamStatus: 200 });
  });

  it('a small JSON file that is not an error passes through whole', async () => {
    const res = await answer('application/json', [Buffer.from('{"data":{"rows":[1,2,3]}}')]);
    expect((await drain(res.body)).toString()).toBe('{"data":{"rows":[1,2,3]}}');
  });

  it('a large JSON file is replayed as a stream without being held whole', async () => {
    const chunk = Buffer.alloc(40_000, 0x20);
    const chunks = [Buffer.from('{"data":"'), chunk, chunk, chunk, Buffer.from('"}')];
    const res = await answer('application/json', chunks);
    expect(res.body).toBeInstanceOf(Readable);
    const out = await drain(res.body);
    expect(out.length).toBe(Buffer.concat(chunks).length);
    expect(out.equals(Buffer.concat(chunks))).toBe(true);
  });

  it('a binary file is not touched', async () => {
    const body = Readable.from([Buffer.from('%PDF-1.4 {"errors":[]}')]);
    const res = await stage(async () => ({
      status: 200,
      headers: { 'content-type': 'application/pdf' },
      body,
      upstreamHeaders: {},
    }))(req);
    expect(res.body).toBe(body);
  });

  it('an upstream that breaks off while peeked → 502 UPSTREAM_ERROR', async () => {
    const broken = new Readable({
      read() {
        this.destroy(new Error('socket hang up'));
      },
    });
    const h = stage(async () => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: broken,
      upstreamHeaders: {},
    }));
    const err = await settled(h, req).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', upstream: 'documents' });
  });
});
