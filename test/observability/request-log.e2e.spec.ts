import { Logger } from '@nestjs/common';
import { overrideDefaultLogDestination } from '../../src/core/logging/log-destination.js';
import type { AtriumLogger } from '../../src/core/logging/logger.factory.js';
import { ATRIUM_LOGGER } from '../../src/core/logging/logging.tokens.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, startGateway, withGateway } from '../helpers/gateway.js';
import { captureDestination } from './log-capture.js';

const UPSTREAM_TOKEN = 'sbx_macro_requestlog_token_77e0a1';

/** Every line the gateway logs, also written to the run's log capture. */
function memoryLog(): { lines: () => Array<Record<string, unknown>>; raw: () => string } {
  const chunks: string[] = [];
  const capture = captureDestination();
  overrideDefaultLogDestination({
    write(line: string) {
      chunks.push(line);
      capture.write(line);
    },
  });
  const raw = () => chunks.join('');
  return {
    raw,
    lines: () =>
      raw()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('request log', () => {
  const reader = testConsumer({ id: 'log-reader', upstreams: new Set(['macro']) });
  const outsider = testConsumer({ id: 'log-outsider', upstreams: new Set(['company']) });
  let log: ReturnType<typeof memoryLog>;
  beforeAll(() => {
    log = memoryLog();
  });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: { LOG_LEVEL: 'info' },
    consumers: [reader, outsider],
  });
  afterAll(() => {
    overrideDefaultLogDestination(captureDestination());
  });

  const requestLines = (reqId: string) => log.lines().filter((l) => l.msg === 'request' && l.reqId === reqId);

  it('writes exactly one lean line per request with the agreed fields', async () => {
    const res = await http(`${gw.url}/macro/feeds?limit=1&offset=0`, {
      headers: { authorization: `Bearer ${reader.key}`, 'x-request-id': 'log-test-ok-1' },
    });
    expect(res.status).toBe(200);
    const lines = requestLines('log-test-ok-1');
    expect(lines).toHaveLength(1);
    const line = lines[0];
    expect(line).toMatchObject({
      level: 'info',
      msg: 'request',
      reqId: 'log-test-ok-1',
      method: 'GET',
      path: '/macro/feeds',
      route: 'macro.feeds.list',
      upstream: 'macro',
      consumer: 'log-reader',
      status: 200,
    });
    expect(typeof line.ms).toBe('number');
    expect(typeof line.upstreamMs).toBe('number');
    expect(line.upstreamMs as number).toBeLessThanOrEqual(line.ms as number);
    // The cache outcome is the X-Cache the client got (absent until a cache stage sets one).
    expect(line.cache).toBe(res.headers['x-cache']);
    // Lean: no headers, no query, no body.
    expect(Object.keys(line).sort()).toEqual(
      expect.arrayContaining(['reqId', 'method', 'path', 'route', 'upstream', 'consumer', 'status', 'ms']),
    );
    for (const k of ['headers', 'query', 'req', 'res', 'body']) expect(line[k]).toBeUndefined();
  });

  it('logs refused requests too (no consumer, no upstream time), without the key that was sent', async () => {
    await http(`${gw.url}/macro/feeds?token=atr_test_wrong_key_for_log_9f8e7d`, {
      headers: { 'x-request-id': 'log-test-401' },
    });
    await http(`${gw.url}/macro/feeds`, {
      headers: { 'x-api-key': outsider.key, 'x-request-id': 'log-test-403' },
    });
    expect(requestLines('log-test-401')[0]).toMatchObject({ status: 401, route: 'macro.feeds.list' });
    expect(requestLines('log-test-401')[0].consumer).toBeUndefined();
    expect(requestLines('log-test-401')[0].upstreamMs).toBeUndefined();
    expect(requestLines('log-test-403')[0]).toMatchObject({ status: 403 });
    expect(log.raw()).not.toContain('atr_test_wrong_key_for_log_9f8e7d');
  });

  it('contains no key from any key position, nor the upstream key, whatever happens', async () => {
    const h = { authorization: `Bearer ${reader.key}` };
    await http(`${gw.url}/macro/feeds?limit=1&token=${reader.key}`);
    await http(`${gw.url}/macro/dictionary/units?sessionId=${reader.key}`);
    await http(`${gw.url}/macro/dictionary/units`, { headers: { 'x-api-key': reader.key } });
    await http(`${gw.url}/macro/dictionary/units`, { headers: { authorization: reader.key } });
    // Fresh queries: no cache entry may answer these. Failures are permanent: retries must not hide them.
    fake.behave({
      failWith: {
        status: 401,
        body: { errors: { status: 401, code: 'X', message: `bad key ${UPSTREAM_TOKEN}` } },
      },
    });
    expect((await http(`${gw.url}/macro/dictionary/units?probe=401`, { headers: h })).status).toBe(502);
    fake.reset();
    fake.behave({ echoCredential: true });
    expect((await http(`${gw.url}/macro/feeds?limit=1&probe=echo`, { headers: h })).status).toBe(200);
    fake.reset();
    fake.behave({ failWith: { status: 500, body: `upstream trace token=${UPSTREAM_TOKEN}` } });
    expect((await http(`${gw.url}/macro/dictionary/geo?probe=500`, { headers: h })).status).toBe(502);
    fake.reset();
    const raw = log.raw();
    expect(raw.length).toBeGreaterThan(0);
    expect(raw).not.toContain(reader.key);
    expect(raw).not.toContain(UPSTREAM_TOKEN);
  });

  it('redacts every key position in structured fields and free text, and the upstream secrets', () => {
    const logger = gw.app.get<AtriumLogger>(ATRIUM_LOGGER);
    logger.warn(
      {
        headers: {
          authorization: 'Bearer hdr-secret-1',
          'x-api-key': 'hdr-secret-2',
          cookie: 'c=hdr-secret-3',
        },
        query: { token: 'qry-secret-4', sessionId: 'qry-secret-5' },
        password: 'pw-secret-6',
        upstream: { credentials: { password: 'pw-secret-7' } },
      },
      `calling /x?token=msg-secret-8&sessionId=msg-secret-9 with Authorization: Bearer msg-secret-10 and ${UPSTREAM_TOKEN}`,
    );
    new Logger('Probe').error(
      `x-api-key: msg-secret-11 {"password":"msg-secret-12"}`,
      `Error: boom\n    at ${UPSTREAM_TOKEN}:1:1`,
    );
    const raw = log.raw();
    for (let i = 1; i <= 12; i++) expect(raw).not.toMatch(new RegExp(`secret-${i}\\b`));
    expect(raw).not.toContain(UPSTREAM_TOKEN);
    const probe = log.lines().find((l) => l.context === 'Probe');
    expect(probe).toMatchObject({ level: 'error' });
    expect(String(probe?.msg)).toContain('[REDACTED]');
  });
});

describe('request log level', () => {
  it('LOG_LEVEL=warn drops the per-request lines (they are info) but keeps warnings', async () => {
    const log = memoryLog();
    const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
    await fake.start();
    const reader = testConsumer({ id: 'quiet', upstreams: new Set(['macro']) });
    const gw = await startGateway({
      env: { UPSTREAM_MACRO_BASE_URL: fake.url, UPSTREAM_MACRO_TOKEN: UPSTREAM_TOKEN, LOG_LEVEL: 'warn' },
      consumers: [reader.consumer],
    });
    try {
      const h = { authorization: `Bearer ${reader.key}` };
      expect((await http(`${gw.url}/macro/dictionary/units`, { headers: h })).status).toBe(200);
      fake.behave({ failWith: { status: 500 } });
      expect((await http(`${gw.url}/macro/dictionary/units?probe=500`, { headers: h })).status).toBe(502);
      const lines = log.lines();
      expect(lines.filter((l) => l.msg === 'request')).toHaveLength(0);
      expect(lines.some((l) => l.level === 'warn' && String(l.msg).includes('UPSTREAM_ERROR'))).toBe(true);
      expect(lines.some((l) => l.level === 'info')).toBe(false);
    } finally {
      await gw.close();
      await fake.close();
      overrideDefaultLogDestination(captureDestination());
    }
  });
});
