import { randomBytes } from 'node:crypto';
import { describeNeeding, TEST_REDIS_URL } from './system-parts.js';

export interface RedisTestContext {
  /** Unique per describe block: suites running in parallel never share keys. */
  prefix: string;
  url: string;
}

/**
 * A describe block that needs a real Redis (TEST_REDIS_URL). Without one it fails under ATRIUM_REQUIRE_REDIS=1
 * (CI) and is skipped, loudly, elsewhere (describeNeeding).
 */
export function describeRedis(name: string, fn: (ctx: RedisTestContext) => void): void {
  const ctx: RedisTestContext = {
    prefix: `atrium-test:${randomBytes(6).toString('hex')}:`,
    url: TEST_REDIS_URL,
  };
  describeNeeding('redis', name, () => fn(ctx));
}
