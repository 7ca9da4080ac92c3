import { randomBytes } from 'node:crypto';
import type { Consumer } from '../../src/core/auth/consumer.js';
import { sha256 } from '../../src/core/auth/consumer-store.service.js';
import { UPSTREAM_NAMES } from '../../src/upstreams/index.js';
import { recordSecret } from '../observability/log-capture.js';

export interface TestConsumer {
  consumer: Consumer;
  key: string;
}

/** A consumer with a fresh random key (tests never share keys), allowed every upstream unless told. */
export function testConsumer(partial: Partial<Omit<Consumer, 'keyHashes'>> & { id: string }): TestConsumer {
  const key = `atr_test_${randomBytes(18).toString('base64url')}`;
  // The post-run log scan looks for every key a test used.
  recordSecret(key);
  return {
    key,
    consumer: {
      upstreams: new Set<string>(UPSTREAM_NAMES),
      write: false,
      limits: [],
      weight: 1,
      reservedShare: 0,
      corsOrigins: [],
      ...partial,
      keyHashes: [sha256(key)],
    },
  };
}
