import type { ProxyRequest, RouteDefinition } from '../../src/proxy/pipeline.types.js';
import type { UpstreamLimiterOptions } from '../../src/proxy/limits/upstream-limiter.js';

export const GET_ROUTE: RouteDefinition = { id: 't.get', method: 'GET', path: '/x', family: 'x' };

/** A pipeline request as the request builder would make it. */
export function proxyRequest(partial: Partial<ProxyRequest> = {}): ProxyRequest {
  return {
    upstream: 't',
    route: GET_ROUTE,
    method: 'GET',
    path: '/x',
    query: [],
    headers: {},
    consumerId: 'c',
    requestId: 'r',
    format: 'json',
    credentialId: 'cred',
    deadline: Date.now() + 10_000,
    noCache: false,
    weight: 1,
    ...partial,
  };
}

/** Test limiter settings; the AIMD bounds follow the rate (a tenth of it to all of it) unless given. */
export function limiterOptions(partial: Partial<UpstreamLimiterOptions> = {}): UpstreamLimiterOptions {
  const rate = partial.ratePerSec ?? 10;
  return {
    upstream: 't',
    title: 'the test service',
    ratePerSec: rate,
    burst: 2,
    maxWaitMs: 500,
    localShare: 0.25,
    aimd: { enabled: true, minRate: rate / 10, maxRate: rate, decrease: 0.5, increasePerSec: rate / 10 },
    breaker: { failureRatio: 0.5, minSample: 4, windowMs: 10_000, openMs: 1_000 },
    cooldown: { defaultSeconds: 2, maxSeconds: 7 },
    maxCost: 1,
    ...partial,
  };
}

/** Settles a promise into a value or the error it threw (for asserting on many at once). */
export function outcome<T>(p: Promise<T>): Promise<T | Error> {
  return p.then(
    (v) => v,
    (e: unknown) => e as Error,
  );
}
