import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { SecretRedactor } from '../../src/core/logging/secret-redactor.js';
import type { ProxyRequest } from '../../src/proxy/pipeline.types.js';
import { FakeDocumentsUpstream } from '../../src/sandbox/documents/fake-documents.upstream.js';
import {
  EmisSessionCredentials,
  type EmisSessionOptions,
} from '../../src/upstreams/shared/emis-session.credentials.js';
import { eventually } from '../helpers/eventually.js';

const USERNAME = 'sbx_unit_user';
const PASSWORD = 'sbx_unit_password_9f1c';
const DAY = 86_400_000;

/** A settable clock shared by the fake (session expiry) and the credentials (renewal). */
function clock() {
  let t = Date.UTC(2025, 0, 1);
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function request(): ProxyRequest {
  return { query: [['countries[0]', 'PL']] } as unknown as ProxyRequest;
}

const sessionOf = (req: ProxyRequest) => req.query.filter(([k]) => k === 'sessionId').map(([, v]) => v);

describe('EmisSessionCredentials against the documents fake', () => {
  const c = clock();
  const fake = new FakeDocumentsUpstream({
    token: 'sbx_unit_token',
    username: USERNAME,
    password: PASSWORD,
    sessionTtlMs: DAY,
    now: c.now,
  });
  const logs: string[] = [];
  const open: EmisSessionCredentials[] = [];
  let redactor: SecretRedactor;

  function make(over: Partial<EmisSessionOptions> = {}): EmisSessionCredentials {
    const creds = new EmisSessionCredentials({
      upstream: 'documents',
      title: 'the document service',
      baseUrl: fake.url,
      username: USERNAME,
      password: PASSWORD,
      sessionTtlMs: DAY,
      refreshMarginMs: 3_600_000,
      backoffMs: 1_000,
      backoffMaxMs: 8_000,
      connectTimeoutMs: 1_000,
      timeoutMs: 2_000,
      redactor,
      now: c.now,
      logger: { log: (m: string) => logs.push(m), warn: (m: string) => logs.push(m) },
      ...over,
    });
    open.push(creds);
    return creds;
  }

  beforeAll(async () => {
    await fake.start();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.expireSessions();
    redactor = new SecretRedactor();
    logs.length = 0;
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });

  it('is lazy, and 50 concurrent first uses share one login', async () => {
    const creds = make();
    expect(fake.calls()).toBe(0);
    const reqs = Array.from({ length: 50 }, request);
    await Promise.all(reqs.map((r) => Promise.resolve(creds.inject(r))));
    expect(fake.calls('/Auth/login/')).toBe(1);
    const ids = new Set(reqs.flatMap(sessionOf));
    expect(ids.size).toBe(1);
    const [id] = ids;
    expect(creds.secrets()).toEqual([PASSWORD, id]);
    expect(redactor.redact(`x ${id} ${PASSWORD}`)).toBe('x [REDACTED] [REDACTED]');
    // Never logged.
    expect(logs.join('\n')).not.toContain(id);
    expect(logs.join('\n')).not.toContain(PASSWORD);
  });

  it('renews ahead of the expiry in the background, keeping the previous id scrubbed', async () => {
    const creds = make();
    const first = request();
    await creds.inject(first);
    const [s1] = sessionOf(first);
    c.advance(DAY - 3_600_000 - 1);
    const stillOld = request();
    await creds.inject(stillOld);
    expect(sessionOf(stillOld)).toEqual([s1]);
    expect(fake.calls('/Auth/login/')).toBe(1);
    c.advance(2);
    // Inside the margin: this request still goes with the live session while a new one is fetched.
    const during = request();
    const r = creds.inject(during);
    expect(r).toBeUndefined();
    expect(sessionOf(during)).toEqual([s1]);
    expect(creds.state().state).toBe('refreshing');
    // The refresh runs in the background: wait until its answer is adopted (the fake seeing the login is
    // not enough: the new session is taken once the answer is read).
    await eventually(() => creds.state().state === 'active', { what: 'the background re-login adopted' });
    expect(fake.calls('/Auth/login/')).toBe(2);
    const after = request();
    await creds.inject(after);
    const [s2] = sessionOf(after);
    expect(s2).not.toBe(s1);
    expect(creds.secrets()).toEqual([PASSWORD, s2, s1]);
    // A third session retires the first from the redactor.
    c.advance(DAY);
    const third = request();
    await creds.inject(third);
    const [s3] = sessionOf(third);
    expect(creds.secrets()).toEqual([PASSWORD, s3, s2]);
    expect(redactor.redact(s1)).toBe(s1);
    expect(redactor.redact(s2)).toBe('[REDACTED]');
  });

  it('after the assumed expiry the next request waits for a new session', async () => {
    const creds = make();
    const a = request();
    await creds.inject(a);
    c.advance(DAY + 1);
    const b = request();
    const pending = creds.inject(b);
    expect(pending).toBeInstanceOf(Promise);
    await pending;
    expect(sessionOf(b)[0]).not.toBe(sessionOf(a)[0]);
    expect(fake.calls('/Auth/login/')).toBe(2);
  });

  it('on a rejected session: one re-login for all concurrent rejections, then retry', async () => {
    const creds = make();
    const reqs = Array.from({ length: 20 }, request);
    await Promise.all(reqs.map((r) => Promise.resolve(creds.inject(r))));
    const answers = await Promise.all(reqs.map((r) => creds.onAuthFailure(r)));
    expect(answers).toEqual(Array(20).fill(true));
    expect(fake.calls('/Auth/login/')).toBe(2);
    // The fresh session is rejected too: no further re-login until the pause has passed.
    const again = request();
    await creds.inject(again);
    expect(await creds.onAuthFailure(again)).toBe(false);
    expect(fake.calls('/Auth/login/')).toBe(2);
    c.advance(1_001);
    expect(await creds.onAuthFailure(again)).toBe(true);
    expect(fake.calls('/Auth/login/')).toBe(3);
  });

  it('a session the vendor accepted that expires again within the pause is renewed at once', async () => {
    const creds = make();
    const first = request();
    await creds.inject(first);
    expect(await creds.onAuthFailure(first)).toBe(true);
    expect(fake.calls('/Auth/login/')).toBe(2);
    // The re-login's session is accepted by the vendor, then expires 10 ms later (well inside the pause).
    const ok = request();
    await creds.inject(ok);
    creds.onAccepted(ok);
    c.advance(10);
    const rejected = request();
    await creds.inject(rejected);
    expect(sessionOf(rejected)).toEqual(sessionOf(ok));
    expect(await creds.onAuthFailure(rejected)).toBe(true);
    expect(fake.calls('/Auth/login/')).toBe(3);
    // The session that re-login gave was never accepted: its rejection pauses re-logins as before.
    const fresh = request();
    await creds.inject(fresh);
    expect(await creds.onAuthFailure(fresh)).toBe(false);
    expect(fake.calls('/Auth/login/')).toBe(3);
  });

  it('a failed login is not retried by onAuthFailure (it never sent a session)', async () => {
    const creds = make({ password: 'sbx_wrong_password_1' });
    const req = request();
    await expect(creds.inject(req)).rejects.toMatchObject({
      code: 'UPSTREAM_AUTH_FAILED',
      upstreamCode: 2001,
    });
    expect(await creds.onAuthFailure(req)).toBe(false);
    expect(fake.calls('/Auth/login/')).toBe(1);
  });

  it('backs off on repeated login failures, doubling up to the maximum', async () => {
    const creds = make({ password: 'sbx_wrong_password_2' });
    const attempt = () =>
      Promise.resolve(creds.inject(request())).then(
        () => 'ok',
        (e: GatewayError) => e.code,
      );
    expect(await Promise.all(Array.from({ length: 30 }, attempt))).toEqual(
      Array(30).fill('UPSTREAM_AUTH_FAILED'),
    );
    expect(fake.calls('/Auth/login/')).toBe(1);
    const pauses = [1_000, 2_000, 4_000, 8_000, 8_000];
    for (const [i, pause] of pauses.entries()) {
      c.advance(pause - 1);
      expect(await attempt()).toBe('UPSTREAM_AUTH_FAILED');
      expect(fake.calls('/Auth/login/')).toBe(i + 1);
      c.advance(1);
      expect(await attempt()).toBe('UPSTREAM_AUTH_FAILED');
      expect(fake.calls('/Auth/login/')).toBe(i + 2);
    }
    expect(creds.state()).toMatchObject({ state: 'backoff', loginFailures: 6 });
    expect(logs.join('\n')).not.toContain('sbx_wrong_password_2');
  });

  it('an unreachable upstream is a 503, with the same backoff', async () => {
    const creds = make({ baseUrl: 'http://127.0.0.1:9/news' });
    await expect(creds.inject(request())).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    await expect(creds.inject(request())).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(creds.loginAttempts).toBe(1);
  });

  it('close() logs out the live session (form body) and later use fails', async () => {
    const creds = make();
    const req = request();
    await creds.inject(req);
    expect(fake.activeSessions).toBe(1);
    await creds.close();
    expect(fake.activeSessions).toBe(0);
    const logout = fake.requests.find((r) => r.path === '/news/Auth/logout/')!;
    expect(logout.method).toBe('POST');
    expect(logout.body.toString()).toBe(`sessionId=${encodeURIComponent(sessionOf(req)[0])}`);
    await expect(creds.inject(request())).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  });

  it('rejects bad options at construction', () => {
    expect(() => make({ refreshMarginMs: DAY })).toThrow(/refreshMarginMs/);
    expect(() => make({ backoffMs: 10_000, backoffMaxMs: 1_000 })).toThrow(/backoffMs/);
    expect(() => make({ password: '' })).toThrow(/password/);
  });
});
