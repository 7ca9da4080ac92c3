// The one consumer of a sandbox boot without a consumers file: every interface, writes allowed, and any
// local development origin for browser apps (a sandbox-only allowance; production lists origins).
import { randomBytes } from 'node:crypto';
import { perSecondAndMinute, type Consumer } from '../core/auth/consumer.js';
import { sha256 } from '../core/auth/consumer-store.service.js';

export const DEMO_CONSUMER_ID = 'demo';

export function demoConsumer(key: string, upstreams: readonly string[]): Consumer {
  return {
    id: DEMO_CONSUMER_ID,
    keyHashes: [sha256(key)],
    upstreams: new Set(upstreams),
    write: true,
    limits: perSecondAndMinute(50, 1000),
    weight: 1,
    reservedShare: 0,
    corsOrigins: [],
    corsAnyLocalPort: true,
  };
}

/** Random per boot, recognisable by shape: `atr_demo_…` keys and `atr_op_…` operator tokens. */
export function sandboxKey(kind: 'demo' | 'op'): string {
  return `atr_${kind}_${randomBytes(18).toString('base64url')}`;
}
