import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, withGateway } from '../helpers/gateway.js';

const UPSTREAM_TOKEN = 'sbx_macro_usage_secret_51aa';
const ADMIN_TOKEN = 'adm_' + 'usage0123456789abcdef';

describe('vendor usage per consumer (memory store)', () => {
  const alpha = testConsumer({ id: 'alpha', upstreams: new Set(['macro']) });
  const beta = testConsumer({ id: 'beta', upstreams: new Set(['macro']) });
  const capped = testConsumer({
    id: 'capped',
    upstreams: new Set(['macro']),
    limits: [{ name: 'per-minute', ttlMs: 60_000, limit: 2 }],
  });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: {
      UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
      UPSTREAM_MACRO_BREAKER_MIN_SAMPLE: '1000',
      UPSTREAM_MACRO_RATE_PER_SEC: '10000',
      UPSTREAM_MACRO_BURST: '10000',
      ATRIUM_CACHE_STALE_WHILE_REVALIDATE_MS: '0',
      ATRIUM_CACHE_STALE_IF_ERROR_MS: '0',
      ATRIUM_OPERATOR_TOKEN: ADMIN_TOKEN,
    },
    consumers: [alpha, beta, capped],
  });

  const keys: Record<string, string> = { alpha: alpha.key, beta: beta.key, capped: capped.key };
  /** What each consumer saw: requests sent and the X-Cache of each answer. */
  const seen: Record<string, { requests: number; cache: Record<string, number>; status: number[] }> = {};
  let n = 0;
  async function call(who: string, path: string) {
    const s = (seen[who] ??= { requests: 0, cache: {}, status: [] });
    // The request id travels to the vendor: the fake's record says whose request spent each call.
    const res = await http(gw.url + path, {
      headers: { authorization: `Bearer ${keys[who]}`, 'x-request-id': `${who}-${++n}` },
    });
    s.requests++;
    s.status.push(res.status);
    const c = res.headers['x-cache'];
    if (c) s.cache[c] = (s.cache[c] ?? 0) + 1;
    return res;
  }
  const admin = (path: string, headers: Record<string, string> = {}) =>
    http(gw.url + path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });
  const vendorCallsOf = (who: string) =>
    fake.requests.filter((r) => String(r.headers['x-request-id']).startsWith(`${who}-`)).length;
  const vendorErrorsOf = (who: string) =>
    fake.requests.filter(
      (r) => String(r.headers['x-request-id']).startsWith(`${who}-`) && r.at >= rateLimitedFrom,
    ).length;
  let rateLimitedFrom = Infinity;

  it('counts cache hits, misses, coalesced bursts, a 429 cooldown and quota refusals exactly as the vendor saw them', async () => {
    // Misses and hits, across consumers (one cache entry whatever the key).
    expect((await call('alpha', '/macro/layout/tables/TB1207')).headers['x-cache']).toBe('MISS');
    expect((await call('alpha', '/macro/layout/tables/TB1207')).headers['x-cache']).toBe('HIT');
    expect((await call('beta', '/macro/layout/tables/TB1207')).headers['x-cache']).toBe('HIT');
    expect((await call('beta', '/macro/layout/tables/TB1207?lang=zh')).headers['x-cache']).toBe('MISS');

    // A coalesced burst from both consumers: one vendor call, charged to whichever request led.
    fake.behave({ latencyMs: 300 });
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(i % 2 ? 'beta' : 'alpha', '/macro/layout/tables/TB1207?lang=ru'),
      ),
    );
    fake.behave({ latencyMs: 0 });
    expect(burst.every((r) => r.status === 200)).toBe(true);
    expect(burst.filter((r) => r.headers['x-cache'] === 'COALESCED').length).toBeGreaterThanOrEqual(8);

    // The vendor's 429: one call spent and failed, then the cooldown refuses without spending any.
    rateLimitedFrom = Date.now();
    fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 30, header: 'retry-after' } });
    expect((await call('alpha', '/macro/layout/tables/TB1207?lang=id')).status).toBe(429);
    expect((await call('beta', '/macro/layout/tables/TB1207?lang=jp')).status).toBe(429);
    expect(
      (await call('beta', '/macro/layout/tables/TB1207?lang=jp&with_model_information=true')).status,
    ).toBe(429);

    // The consumer's own quota: the third request in the minute is refused before anything else.
    await call('capped', '/macro/layout/tables/TB1207');
    await call('capped', '/macro/layout/tables/TB1207');
    expect((await call('capped', '/macro/layout/tables/TB1207')).status).toBe(429);

    const res = await admin('/admin/usage');
    expect(res.status).toBe(200);
    const report = res.json();
    const row = (who: string) => report.rows.find((r: { consumer: string }) => r.consumer === who);
    for (const who of ['alpha', 'beta']) {
      const s = seen[who];
      expect(row(who)).toMatchObject({
        upstream: 'macro',
        requests: s.requests,
        cacheAnswers: s.cache.HIT ?? 0,
        coalesced: s.cache.COALESCED ?? 0,
        vendorCalls: vendorCallsOf(who),
        vendorErrors: vendorErrorsOf(who),
        quotaRejections: 0,
      });
    }
    expect(row('alpha').vendorErrors).toBe(1);
    expect(row('beta')).toMatchObject({ shieldRejections: 2 });
    expect(row('alpha')).toMatchObject({ shieldRejections: 0 });
    expect(row('capped')).toMatchObject({ requests: 3, quotaRejections: 1, cacheAnswers: 2, vendorCalls: 0 });
    // Every vendor call is somebody's, exactly once.
    expect(report.totals.vendorCalls).toBe(fake.requests.length);
    expect(report.totals.requests).toBe(seen.alpha.requests + seen.beta.requests + seen.capped.requests);

    // The same counters in /metrics, labelled by consumer.
    const metrics = (await http(gw.url + '/metrics')).text;
    expect(metrics).toContain(
      `atrium_consumer_vendor_calls_total{consumer="alpha",upstream="macro"} ${vendorCallsOf('alpha')}`,
    );
    expect(metrics).toContain('atrium_consumer_shield_rejections_total{consumer="beta",upstream="macro"} 2');
    expect(metrics).toContain('atrium_consumer_quota_rejections_total{consumer="capped",upstream="macro"} 1');

    // Request and upstream-call metrics carry the status code beside its class.
    expect(metrics).toMatch(
      /atrium_requests_total\{upstream="macro",route="macro\.layout\.table",status_class="4xx",status="429",cache="none"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /atrium_upstream_requests_total\{upstream="macro",route="macro\.layout\.table",status_class="4xx",status="429"\} 1\n/,
    );

    // The console's table: today and the last 7 days per consumer and upstream, behind the operator key.
    expect((await http(gw.url + '/console/api/usage')).status).toBe(401);
    const consoleUsage = await http(gw.url + '/console/api/usage', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const summary = consoleUsage.json().usage;
    expect(summary.store).toBe('memory');
    const beta = summary.rows.find((r: { consumer: string }) => r.consumer === 'beta');
    expect(beta.today).toEqual(beta.week);
    expect(beta.today).toMatchObject({ requests: seen.beta.requests, shieldRejections: 2 });

    // CSV, by Accept or format=csv, and the filters.
    const csv = await admin('/admin/usage?consumer=beta&format=csv');
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe(
      'day,consumer,upstream,requests,cacheAnswers,coalesced,vendorCalls,vendorErrors,quotaRejections,shieldRejections,watchPolls',
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`,beta,macro,${seen.beta.requests},`);
    const byAccept = await admin('/admin/usage?upstream=macro', { accept: 'text/csv' });
    expect(byAccept.text.trim().split('\r\n')).toHaveLength(4);
  });

  it('refuses bad ranges and callers without the operator token', async () => {
    expect((await admin('/admin/usage?from=2025-02-30')).json().error).toMatchObject({
      code: 'VALIDATION_FAILED',
      parameter: 'from',
    });
    expect((await admin('/admin/usage?from=2025-03-02&to=2025-03-01')).status).toBe(400);
    expect((await admin('/admin/usage?from=2020-01-01&to=2025-01-01')).status).toBe(400);
    const past = await admin('/admin/usage?from=2020-01-01&to=2020-01-07');
    expect(past.json()).toMatchObject({ from: '2020-01-01', to: '2020-01-07', rows: [] });
    expect(
      (await http(gw.url + '/admin/usage', { headers: { authorization: `Bearer ${alpha.key}` } })).status,
    ).toBe(401);
  });
});
