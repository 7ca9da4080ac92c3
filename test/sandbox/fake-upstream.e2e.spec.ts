import { Agent } from 'undici';
import { FakeUpstream } from '../../src/sandbox/fake-upstream.js';
import { call, manualClock, waitFor } from './http.js';

describe('FakeUpstream (generic)', () => {
  const clock = manualClock();
  const fake = new FakeUpstream({
    kind: 'generic',
    basePath: '/base',
    now: clock.now,
    handler: (req) => ({ json: { ok: true, path: req.path } }),
  });

  beforeAll(async () => {
    await fake.start();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('records the raw url, the decoded query pairs in order, headers and body', async () => {
    const res = await call(`${fake.url}/things/a%2Fb?x=1&name=hello+world&x=%2B2&empty=`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-custom': 'yes' },
      body: 'payload-bytes',
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ ok: true, path: '/things/a%2Fb' });
    expect(fake.requests).toHaveLength(1);
    const [r] = fake.requests;
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/base/things/a%2Fb?x=1&name=hello+world&x=%2B2&empty=');
    expect(r.path).toBe('/base/things/a%2Fb');
    expect(r.query).toEqual([
      ['x', '1'],
      ['name', 'hello world'],
      ['x', '+2'],
      ['empty', ''],
    ]);
    expect(r.headers['x-custom']).toBe('yes');
    expect(r.body.toString()).toBe('payload-bytes');
    expect(r.at).toBe(clock.now());
  });

  it('counts calls, optionally by path prefix below the base path', async () => {
    await call(`${fake.url}/a/1`);
    await call(`${fake.url}/a/2`);
    await call(`${fake.url}/b`);
    expect(fake.calls()).toBe(3);
    expect(fake.calls('/a')).toBe(2);
    expect(fake.calls('/b')).toBe(1);
  });

  it('keeps only the latest requests beyond recordLimit, while calls() counts all of them', async () => {
    const small = new FakeUpstream({ kind: 'small', recordLimit: 3, handler: () => ({ json: {} }) });
    await small.start();
    try {
      for (let i = 0; i < 10; i++) await call(`${small.url}/${i % 2 === 0 ? 'even' : 'odd'}/${i}`);
      expect(small.calls()).toBe(10);
      expect(small.calls('/even')).toBe(5);
      expect(small.requests.length).toBeGreaterThanOrEqual(3);
      expect(small.requests.length).toBeLessThan(6);
      expect(small.requests[small.requests.length - 1].path).toBe('/odd/9');
    } finally {
      await small.close();
    }
  });

  it('answers paths outside the base path with 404', async () => {
    const res = await call(`${fake.origin}/elsewhere`);
    expect(res.status).toBe(404);
  });

  it('delays answers by latencyMs', async () => {
    fake.behave({ latencyMs: 150 });
    const t0 = Date.now();
    const res = await call(`${fake.url}/slow`);
    expect(res.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('fails the next `times` requests with failWith, recording them, then recovers', async () => {
    fake.behave({ failWith: { status: 503, headers: { 'X-Fail': 'yes' }, times: 2 } });
    const a = await call(`${fake.url}/f`);
    const b = await call(`${fake.url}/f`);
    const c = await call(`${fake.url}/f`);
    expect([a.status, b.status, c.status]).toEqual([503, 503, 200]);
    expect(a.headers['x-fail']).toBe('yes');
    expect(a.json).toEqual({ error: { status: 503, message: 'HTTP 503' } });
    expect(fake.requests).toHaveLength(3);
    expect(fake.behaviour.failWith).toBeUndefined();
  });

  it('sends a failWith string body with a sniffed content type, and keeps failing without `times`', async () => {
    fake.behave({ failWith: { status: 502, body: '<html><body>Bad Gateway</body></html>' } });
    for (let i = 0; i < 3; i++) {
      const res = await call(`${fake.url}/f`);
      expect(res.status).toBe(502);
      expect(res.headers['content-type']).toBe('text/html');
      expect(res.text).toContain('Bad Gateway');
    }
    fake.behave({ failWith: { status: 400, body: { custom: ['shape'] } } });
    const res = await call(`${fake.url}/f`);
    expect(res.json).toEqual({ custom: ['shape'] });
  });

  it('rate-limits after `afterCalls` for `retryAfterSeconds`, then serves and counts anew', async () => {
    fake.behave({ rateLimit: { afterCalls: 2, retryAfterSeconds: 30 } });
    expect((await call(`${fake.url}/r`)).status).toBe(200);
    expect((await call(`${fake.url}/r`)).status).toBe(200);
    const limited = await call(`${fake.url}/r`);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('30');
    clock.advance(10_000);
    const again = await call(`${fake.url}/r`);
    expect(again.status).toBe(429);
    expect(again.headers['retry-after']).toBe('20');
    clock.advance(20_000);
    expect((await call(`${fake.url}/r`)).status).toBe(200);
    expect((await call(`${fake.url}/r`)).status).toBe(200);
    expect((await call(`${fake.url}/r`)).status).toBe(429);
    expect(fake.requests).toHaveLength(7);
  });

  it.each([
    ['retry-after-date', 'retry-after'],
    ['x-ratelimit-reset', 'x-ratelimit-reset'],
    ['ratelimit-reset', 'ratelimit-reset'],
  ] as const)('rate-limit header style %s', async (style, header) => {
    fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 60, header: style } });
    const res = await call(`${fake.url}/r`);
    expect(res.status).toBe(429);
    const value = String(res.headers[header]);
    const until = clock.now() + 60_000;
    if (style === 'retry-after-date') expect(Date.parse(value)).toBe(Math.ceil(until / 1000) * 1000);
    if (style === 'x-ratelimit-reset') expect(Number(value)).toBe(Math.ceil(until / 1000));
    if (style === 'ratelimit-reset') expect(value).toBe('60');
  });

  it('omits rate-limit headers with header "none"', async () => {
    fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 5, header: 'none' } });
    const res = await call(`${fake.url}/r`);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBeUndefined();
  });

  it('resets connections `times` times, recording those requests', async () => {
    fake.behave({ resetConnections: { times: 1 } });
    await expect(call(`${fake.url}/reset`)).rejects.toThrow();
    const ok = await call(`${fake.url}/reset`);
    expect(ok.status).toBe(200);
    expect(fake.requests.map((r) => r.path)).toEqual(['/base/reset', '/base/reset']);
  });

  it('answers oversizeBytes with a valid JSON body of about that size', async () => {
    fake.behave({ oversizeBytes: 2_000_000 });
    const res = await call(`${fake.url}/big`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(Number(res.headers['content-length'])).toBe(res.buf.length);
    expect(res.buf.length).toBeGreaterThan(1_990_000);
    expect(res.buf.length).toBeLessThanOrEqual(2_000_000);
    expect(Array.isArray(res.json.data)).toBe(true);
  });

  it('answers malformedJson with a truncated JSON body', async () => {
    fake.behave({ malformedJson: true });
    const res = await call(`${fake.url}/broken`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(() => JSON.parse(res.text) as unknown).toThrow();
  });

  it('stop() refuses connections and restart() serves again on the same port', async () => {
    const url = fake.url;
    await fake.stop();
    // A fresh agent: a pooled keep-alive socket would fail differently (closed by stop()).
    const agent = new Agent();
    try {
      expect(fake.listening).toBe(false);
      await expect(call(`${url}/x`, { dispatcher: agent })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      await fake.restart();
    }
    expect(fake.url).toBe(url);
    expect((await call(`${url}/x`, { dispatcher: agent })).status).toBe(200);
    await agent.close();
  });

  it('reset() clears requests and behaviour', async () => {
    fake.behave({ latencyMs: 5, failWith: { status: 500 } });
    await call(`${fake.url}/x`);
    fake.reset();
    expect(fake.requests).toHaveLength(0);
    expect(fake.behaviour).toEqual({ latencyMs: 0 });
    expect((await call(`${fake.url}/x`)).status).toBe(200);
  });

  it('accepts a query string of about 40 KiB', async () => {
    const res = await call(`${fake.url}/long?data=${'a'.repeat(40_000)}`);
    expect(res.status).toBe(200);
    expect(fake.requests[0].query[0][1]).toHaveLength(40_000);
  });

  describe('control API over HTTP', () => {
    it('lists recorded requests (utf8 or base64 bodies) and counts calls, without recording itself', async () => {
      await call(`${fake.url}/text`, { method: 'POST', body: 'héllo' });
      await call(`${fake.url}/bin`, { method: 'POST', body: Buffer.from([0xff, 0x00, 0xfe]) });
      const list = await call(`${fake.controlUrl}/requests`);
      expect(list.status).toBe(200);
      expect(list.json).toHaveLength(2);
      expect(list.json[0]).toMatchObject({
        method: 'POST',
        path: '/base/text',
        body: 'héllo',
        bodyEncoding: 'utf8',
      });
      expect(list.json[1]).toMatchObject({ path: '/base/bin', body: '/wD+', bodyEncoding: 'base64' });
      const calls = await call(`${fake.controlUrl}/calls?prefix=/text`);
      expect(calls.json).toEqual({ calls: 1 });
      expect(fake.requests).toHaveLength(2);
    });

    it('POST /__fake/behave merges behaviour, null clears, invalid input is a 400', async () => {
      const set = await call(`${fake.controlUrl}/behave`, {
        method: 'POST',
        body: JSON.stringify({ failWith: { status: 418, times: 1 } }),
      });
      expect(set.status).toBe(200);
      expect(set.json.failWith).toEqual({ status: 418, times: 1 });
      expect((await call(`${fake.url}/x`)).status).toBe(418);
      expect((await call(`${fake.url}/x`)).status).toBe(200);

      await call(`${fake.controlUrl}/behave`, { method: 'POST', body: '{"latencyMs":20,"hang":false}' });
      const cleared = await call(`${fake.controlUrl}/behave`, { method: 'POST', body: '{"latencyMs":null}' });
      expect(cleared.json).toEqual({ latencyMs: 0, hang: false });

      const unknown = await call(`${fake.controlUrl}/behave`, { method: 'POST', body: '{"latency":5}' });
      expect(unknown.status).toBe(400);
      expect(unknown.json.error).toContain('latency');
      const wrongType = await call(`${fake.controlUrl}/behave`, { method: 'POST', body: '{"hang":"yes"}' });
      expect(wrongType.status).toBe(400);
      const notJson = await call(`${fake.controlUrl}/behave`, { method: 'POST', body: '{' });
      expect(notJson.status).toBe(400);
    });

    it('POST /__fake/reset clears; GET /__fake/info and /__fake/behaviour describe the fake', async () => {
      fake.behave({ latencyMs: 1 });
      await call(`${fake.url}/x`);
      expect((await call(`${fake.controlUrl}/reset`, { method: 'POST' })).json).toEqual({ ok: true });
      expect(fake.requests).toHaveLength(0);
      expect((await call(`${fake.controlUrl}/behaviour`)).json).toEqual({ latencyMs: 0 });
      const info = await call(`${fake.controlUrl}/info`);
      expect(info.json).toEqual({
        kind: 'generic',
        url: fake.url,
        basePath: '/base',
        controlUrl: fake.controlUrl,
      });
      expect((await call(`${fake.controlUrl}/nope`)).status).toBe(404);
      expect(fake.requests).toHaveLength(0);
    });
  });
});

describe('FakeUpstream hang', () => {
  it('holds requests open until close(), which ends them and leaves no connection behind', async () => {
    const fake = new FakeUpstream({ kind: 'hang', handler: () => ({ json: {} }) });
    await fake.start();
    fake.behave({ hang: true });
    const pending = call(`${fake.url}/never`);
    const outcome = pending.then(
      () => 'answered',
      () => 'failed',
    );
    await waitFor(() => fake.requests.length === 1);
    expect(fake.connectionCount).toBe(1);
    await fake.close();
    expect(await outcome).toBe('failed');
    expect(fake.connectionCount).toBe(0);
    expect(fake.listening).toBe(false);
  });

  it('close() cancels pending latency timers', async () => {
    const fake = new FakeUpstream({ kind: 'slow', handler: () => ({ json: {} }) });
    await fake.start();
    fake.behave({ latencyMs: 60_000 });
    const outcome = call(`${fake.url}/slow`).then(
      () => 'answered',
      () => 'failed',
    );
    await waitFor(() => fake.requests.length === 1);
    const t0 = Date.now();
    await fake.close();
    expect(await outcome).toBe('failed');
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
