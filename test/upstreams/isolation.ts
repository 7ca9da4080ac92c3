/**
 * Settings for suites that assert on every single call reaching a fake upstream: no response cache, no
 * retries, no breaker, and an upstream budget no burst of a test can exhaust. The cache, the retries and
 * the shield have their own suites (test/cache, test/limits); suites here leave them on where the point is
 * that a route bypasses them (usage reports, files).
 */
export function oneCallPerRequest(
  ...upstreams: Array<'COMPANY' | 'DOCUMENTS' | 'DEALS'>
): Record<string, string> {
  const env: Record<string, string> = { ATRIUM_CACHE_MAX_BYTES: '0' };
  for (const u of upstreams) {
    env[`UPSTREAM_${u}_RETRY_ATTEMPTS`] = '1';
    env[`UPSTREAM_${u}_BREAKER_MIN_SAMPLE`] = '1000';
    env[`UPSTREAM_${u}_RATE_PER_SEC`] = '10000';
    env[`UPSTREAM_${u}_BURST`] = '10000';
  }
  return env;
}

/** A budget no burst of a test can exhaust, everything else as configured by default. */
export function ampleBudget(...upstreams: Array<'COMPANY' | 'DOCUMENTS' | 'DEALS'>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const u of upstreams) {
    env[`UPSTREAM_${u}_RATE_PER_SEC`] = '10000';
    env[`UPSTREAM_${u}_BURST`] = '10000';
  }
  return env;
}
