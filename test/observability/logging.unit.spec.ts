import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config/atrium-config.js';
import { scrubKeyPositions } from '../../src/core/logging/key-scrub.js';
import {
  createLogger,
  registerLogRedactor,
  unregisterLogRedactor,
} from '../../src/core/logging/logger.factory.js';
import { PinoNestLogger } from '../../src/core/logging/pino-nest.logger.js';
import { RequestLogger } from '../../src/core/logging/request-log.js';
import { SecretRedactor } from '../../src/core/logging/secret-redactor.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';

function sink(): {
  stream: Writable & { write: (s: string) => boolean };
  lines: () => Array<Record<string, unknown>>;
} {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.push(chunk.toString());
      cb();
    },
  });
  return {
    stream: stream,
    lines: () =>
      out
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('scrubKeyPositions', () => {
  it.each([
    ['GET /x?token=abc123secret&limit=1', 'GET /x?token=[REDACTED]&limit=1'],
    ['/y?a=1&sessionId=abcdef123', '/y?a=1&sessionId=[REDACTED]'],
    ['login?username=u&password=hunter2hunter', 'login?username=u&password=[REDACTED]'],
    ['Authorization: Bearer abc.def-ghi', 'Authorization: Bearer [REDACTED]'],
    ['authorization=rawkey12345', 'authorization=[REDACTED]'],
    ['X-API-Key: k3y-v4lue', 'X-API-Key: [REDACTED]'],
    ['{"token":"abc","password":"p\\"w"}', '{"token":"[REDACTED]","password":"[REDACTED]"}'],
    ['sent bearer eyJhbGciOi.xyz to it', 'sent bearer [REDACTED] to it'],
    // A URL quoted inside another URL's query, and JSON quoted inside a JSON string.
    ['next=%2Fx%3Ftoken%3Dab%2Fcd%2Bef%26limit%3D1', 'next=%2Fx%3Ftoken%3D[REDACTED]%26limit%3D1'],
    ['body "{\\"sessionId\\":\\"ab\\/cd\\"}"', 'body "{\\"sessionId\\":\\"[REDACTED]\\"}"'],
    // An end-user token (JWT) wherever it appears, not only after a key position.
    ['jwt eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl seen', 'jwt [REDACTED] seen'],
    ['{"id_token":"eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0."}', '{"id_token":"[REDACTED]"}'],
  ])('%s', (input, expected) => expect(scrubKeyPositions(input)).toBe(expected));

  it('leaves ordinary text alone', () => {
    const text = 'authorization failed for consumer reader; token bucket empty; GET /macro/feeds?limit=1';
    expect(scrubKeyPositions(text)).toBe(text);
  });
});

describe('createLogger', () => {
  it('writes JSON lines with level labels and honours the level', () => {
    const s = sink();
    const logger = createLogger({ level: 'warn', destination: s.stream });
    logger.info('not shown');
    logger.warn({ a: 1 }, 'shown');
    expect(s.lines()).toEqual([expect.objectContaining({ level: 'warn', a: 1, msg: 'shown' })]);
  });

  it('censors key fields at three levels and scrubs upstream secrets while a redactor is registered', () => {
    const s = sink();
    const logger = createLogger({ level: 'info', destination: s.stream });
    const redactor = new SecretRedactor();
    redactor.register('upstream-secret-value-1');
    logger.info('before attach upstream-secret-value-1');
    registerLogRedactor(redactor);
    try {
      logger.info(
        {
          token: 'a1',
          x: { sessionId: 'a2', y: { password: 'a3', 'x-api-key': 'a4' } },
          authorization: 'a5',
        },
        'after attach upstream-secret-value-1',
      );
    } finally {
      unregisterLogRedactor(redactor);
    }
    const [before, after] = s.lines();
    expect(before.msg).toContain('upstream-secret-value-1');
    expect(after.msg).toBe('after attach [REDACTED]');
    expect(JSON.stringify(after)).not.toMatch(/"a[1-5]"/);
    expect(after).toMatchObject({ token: '[REDACTED]', authorization: '[REDACTED]' });
  });

  it('scrubs upstream secrets in their encoded forms too (URL-encoded, JSON-escaped, base64)', () => {
    const s = sink();
    const logger = createLogger({ level: 'info', destination: s.stream });
    const secret = 'ab/cd+ef==gh12345';
    const redactor = new SecretRedactor();
    redactor.register(secret);
    registerLogRedactor(redactor);
    try {
      logger.warn(`GET /v2/feeds?token=ab%2fcd%2bef%3d%3dgh12345 failed; echo ab\\/cd+ef==gh12345`);
      logger.warn(`vendor said ${Buffer.from(secret).toString('base64')}`);
    } finally {
      unregisterLogRedactor(redactor);
    }
    const text = s
      .lines()
      .map((l) => String(l.msg))
      .join('\n');
    expect(text).not.toMatch(/ab.{0,3}cd|YWIvY2Qr/);
    expect(text.match(/\[REDACTED\]/g)).toHaveLength(3);
  });
});

describe('PinoNestLogger', () => {
  it('maps Nest levels and conventions (context last, stack before it) to pino', () => {
    const s = sink();
    const nest = new PinoNestLogger(createLogger({ level: 'trace', destination: s.stream }));
    nest.log('started', 'Atrium');
    nest.error('failed', 'Error: x\n    at f (a.js:1:1)', 'ExceptionHandler');
    nest.error('only context', 'Proxy');
    nest.verbose('chatty');
    nest.warn({ message: 'object message', upstream: 'macro' }, 'Limits');
    nest.fatal(new Error('fatal boom'));
    // Nest's boot chatter (a line per route) is debug: at info an operator reads the gateway's own lines.
    nest.log('Mapped {/macro/feeds, GET} route', 'RouterExplorer');
    const lines = s.lines();
    expect(lines[6]).toMatchObject({ level: 'debug', context: 'RouterExplorer' });
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'started', context: 'Atrium' });
    expect(lines[1]).toMatchObject({ level: 'error', msg: 'failed', context: 'ExceptionHandler' });
    expect(String(lines[1].stack)).toContain('at f (a.js:1:1)');
    expect(lines[2]).toMatchObject({ level: 'error', msg: 'only context', context: 'Proxy' });
    expect(lines[2].stack).toBeUndefined();
    expect(lines[3]).toMatchObject({ level: 'trace', msg: 'chatty' });
    expect(lines[4]).toMatchObject({
      level: 'warn',
      msg: 'object message',
      upstream: 'macro',
      context: 'Limits',
    });
    expect(lines[5]).toMatchObject({ level: 'fatal', msg: 'fatal boom', errorName: 'Error' });
  });
});

describe('logging configuration', () => {
  const base = { UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9', UPSTREAM_MACRO_TOKEN: 'sbx_test_tok_123456' };
  const env = (extra: Record<string, string>) => {
    const e: Record<string, string> = { ...extra };
    for (const n of ['MACRO', 'COMPANY', 'DOCUMENTS', 'DEALS']) {
      e[`UPSTREAM_${n}_BASE_URL`] = base.UPSTREAM_MACRO_BASE_URL;
      e[`UPSTREAM_${n}_TOKEN`] = base.UPSTREAM_MACRO_TOKEN;
    }
    return e;
  };

  it('pretty logs only with NODE_ENV=development', () => {
    expect(loadConfig(env({ NODE_ENV: 'development' }), UPSTREAMS).prettyLogs).toBe(true);
    expect(loadConfig(env({ NODE_ENV: 'production' }), UPSTREAMS).prettyLogs).toBe(false);
    expect(loadConfig(env({}), UPSTREAMS).prettyLogs).toBe(false);
  });

  it('LOG_LEVEL is validated; ATRIUM_METRICS_TOKEN must be long, and errors never print it', () => {
    expect(() => loadConfig(env({ LOG_LEVEL: 'loud' }), UPSTREAMS)).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig(env({ ATRIUM_METRICS_TOKEN: 'short-tok' }), UPSTREAMS)).toThrow(
      /ATRIUM_METRICS_TOKEN/,
    );
    try {
      loadConfig(env({ ATRIUM_METRICS_TOKEN: 'short-tok' }), UPSTREAMS);
    } catch (e) {
      expect((e as Error).message).not.toContain('short-tok');
    }
    expect(
      loadConfig(env({ ATRIUM_METRICS_TOKEN: 'a-long-enough-metrics-token' }), UPSTREAMS).metricsToken,
    ).toBe('a-long-enough-metrics-token');
  });
});

describe('censorKeys', () => {
  it('censors key fields at any of the first levels, in objects and arrays, whatever their case', async () => {
    const { censorKeys } = await import('../../src/core/logging/logger.factory.js');
    const input = {
      Authorization: 'a',
      nested: { 'X-API-Key': 'b', list: [{ token: 'c' }, { ok: 1 }] },
      query: { sessionId: 'd', limit: '1' },
      empty: { password: undefined },
    };
    expect(censorKeys(input)).toEqual({
      Authorization: '[REDACTED]',
      nested: { 'X-API-Key': '[REDACTED]', list: [{ token: '[REDACTED]' }, { ok: 1 }] },
      query: { sessionId: '[REDACTED]', limit: '1' },
      empty: { password: undefined },
    });
    // The input is not modified; a clean object is returned as is (no copy on the hot path).
    expect(input.nested.list[0].token).toBe('c');
    const clean = { reqId: 'r', status: 200, route: 'macro.feeds.list' };
    expect(censorKeys(clean)).toBe(clean);
  });
});

describe('RequestLogger (the per-request line)', () => {
  const record = {
    reqId: 'req "quoted" \\ \u0001 id',
    method: 'GET',
    path: '/macro/feeds/ü',
    route: 'macro.feeds.list',
    upstream: 'macro',
    consumer: 'c-1',
    status: 200,
    cache: 'HIT',
    upstreamMs: 1.5,
    ms: 2.25,
  };

  it('writes level, time, pid, hostname, the record in its order, then msg', () => {
    const out = sink();
    new RequestLogger(createLogger({ level: 'info', destination: out.stream })).write(record);
    const [line] = out.lines();
    expect(typeof line.time).toBe('number');
    expect(Object.keys(line)).toEqual(['level', 'time', 'pid', 'hostname', ...Object.keys(record), 'msg']);
    expect(line).toMatchObject({ ...record, level: 'info', msg: 'request' });
  });

  it('leaves absent fields out and honours the level', () => {
    const out = sink();
    const logger = new RequestLogger(createLogger({ level: 'info', destination: out.stream }));
    logger.write({
      reqId: 'r',
      method: 'GET',
      path: '/health/live',
      status: 200,
      ms: 0.4,
      consumer: undefined,
    });
    logger.write({ reqId: 'inner', method: 'GET', path: '/x', status: 200, ms: 1 }, 'debug');
    expect(out.lines()).toHaveLength(1);
    expect(out.lines()[0]).toEqual(
      expect.objectContaining({ reqId: 'r', status: 200, ms: 0.4, msg: 'request', level: 'info' }),
    );
    expect(Object.keys(out.lines()[0])).not.toContain('consumer');
    expect(logger.enabledAt('debug')).toBe(false);
    expect(new RequestLogger(createLogger({ level: 'warn', destination: out.stream })).enabled).toBe(false);
  });

  it('escapes what needs escaping', () => {
    const out = sink();
    const logger = new RequestLogger(createLogger({ level: 'info', destination: out.stream }));
    const paths = ['/plain/path-1.2:3', '/q"uote', '/back\\slash', '/ctl\u0001\n', '/ünï/😀', '/\u2028'];
    for (const path of paths) logger.write({ reqId: 'r', method: 'GET', path, status: 200, ms: 1 });
    expect(out.lines().map((l) => l.path)).toEqual(paths);
  });
});
