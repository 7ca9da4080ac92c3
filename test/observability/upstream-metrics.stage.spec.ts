import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { compose } from '../../src/proxy/compose.js';
import type { Handler, ProxyRequest, ProxyResponse } from '../../src/proxy/pipeline.types.js';
import { upstreamMetricsStage } from '../../src/proxy/stages/upstream-metrics.stage.js';
import { statusClass } from '../../src/metrics/status-class.js';

const req = (requestId: string): ProxyRequest => ({
  upstream: 'u',
  route: { id: 'u.items.list', method: 'GET', path: '/items', family: 'items' },
  method: 'GET',
  path: '/items',
  query: [],
  headers: {},
  consumerId: 'c',
  requestId,
  format: 'json',
  credentialId: 'x',
  deadline: Date.now() + 1000,
  noCache: false,
  weight: 1,
});

describe('upstreamMetricsStage', () => {
  const calls: Array<[string, number | undefined, number, string]> = [];
  const stage = upstreamMetricsStage({ record: (...a) => void calls.push(a) });
  beforeEach(() => (calls.length = 0));

  it('validates its options when built', () => {
    expect(() => upstreamMetricsStage({ record: undefined as never })).toThrow(/record/);
  });

  it('records route, upstream status and time of an answer', async () => {
    // Jest's fake timers move performance.now() too: the answer takes exactly 15 ms of fake time.
    jest.useFakeTimers();
    try {
      const ok: Handler = async () => {
        await new Promise((r) => setTimeout(r, 15));
        return { status: 200, headers: {}, body: Buffer.from('{}') } satisfies ProxyResponse;
      };
      const pending = compose([stage], ok)(req('r1'));
      await jest.advanceTimersByTimeAsync(15);
      const res = await pending;
      expect(res.status).toBe(200);
    } finally {
      jest.useRealTimers();
    }
    expect(calls).toHaveLength(1);
    expect(calls[0][0]).toBe('u.items.list');
    expect(calls[0][1]).toBe(200);
    expect(calls[0][2]).toBe(15);
    expect(calls[0][3]).toBe('r1');
  });

  it('records the upstream status of a normalised error, and none when there was no answer', async () => {
    const upstream429: Handler = async () => {
      throw new GatewayError('UPSTREAM_RATE_LIMITED', { upstreamStatus: 429, fromUpstream: true });
    };
    const refused: Handler = async () => {
      throw new GatewayError('UPSTREAM_UNAVAILABLE', { upstreamCode: 'ECONNREFUSED' });
    };
    await expect(compose([stage], upstream429)(req('r2'))).rejects.toMatchObject({
      code: 'UPSTREAM_RATE_LIMITED',
    });
    await expect(compose([stage], refused)(req('r3'))).rejects.toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
    });
    expect(calls.map((c) => [c[1], c[3]])).toEqual([
      [429, 'r2'],
      [undefined, 'r3'],
    ]);
  });

  it('sees every attempt when a retry stage sits outside it', async () => {
    let n = 0;
    const flaky: Handler = async () => {
      if (++n < 3) throw new GatewayError('UPSTREAM_ERROR', { upstreamStatus: 503, fromUpstream: true });
      return { status: 200, headers: {}, body: Buffer.from('{}') };
    };
    const retry =
      (next: Handler): Handler =>
      async (r) => {
        for (let i = 0; ; i++) {
          try {
            return await next(r);
          } catch (e) {
            if (i >= 2) throw e;
          }
        }
      };
    await compose([retry, stage], flaky)(req('r4'));
    expect(calls.map((c) => statusClass(c[1]))).toEqual(['5xx', '5xx', '2xx']);
  });

  it('status classes are bounded', () => {
    expect([200, 204, 301, 404, 429, 503, undefined, 0, 999].map(statusClass)).toEqual([
      '2xx',
      '2xx',
      '3xx',
      '4xx',
      '4xx',
      '5xx',
      'none',
      'none',
      'none',
    ]);
  });
});

describe('UpstreamTimings', () => {
  it('hands a request its summed upstream time once, and drops entries nobody claimed', async () => {
    const { UpstreamTimings } = await import('../../src/metrics/upstream-timings.js');
    jest.useFakeTimers({ now: 1_000_000 });
    try {
      const t = new UpstreamTimings();
      t.add('a', 2);
      t.add('a', 3);
      expect(t.take('a')).toBe(5);
      expect(t.take('a')).toBeUndefined();
      t.add('orphan', 1); // e.g. a background cache refresh after the answer was sent
      jest.setSystemTime(1_000_000 + 61_000);
      t.add('b', 1);
      expect(t.take('orphan')).toBeUndefined();
      expect(t.size).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });
});
