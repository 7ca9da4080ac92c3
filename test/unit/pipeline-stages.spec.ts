import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { SecretRedactor } from '../../src/core/logging/secret-redactor.js';
import { compose } from '../../src/proxy/compose.js';
import type { Handler, ProxyRequest, Stage } from '../../src/proxy/pipeline.types.js';
import { credentialsStage } from '../../src/proxy/stages/credentials.stage.js';
import { keyEchoStage } from '../../src/proxy/stages/key-echo.stage.js';
import { isValidBody, looksLikeJson, looksLikeXml } from '../../src/proxy/stages/normalize.stage.js';
import { proxyRequest } from '../helpers/proxy-request.js';

/** A pipeline request with a short deadline. */
const req = (partial: Partial<ProxyRequest> = {}): ProxyRequest =>
  proxyRequest({ deadline: Date.now() + 2000, ...partial });

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
