import { createHash } from 'node:crypto';
import type { Consumer } from '../auth/consumer.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { MultiWindowThrottlerStorage, QuotaVerdict } from './quota-storage.js';

/**
 * The storage keys of one end user's windows: in the consumer's hash slot (`{id}`, one Redis Cluster slot
 * like the consumer's own), the user as a digest (a `sub` may be an e-mail address; keys are not for reading).
 */
function userKeys(consumer: Consumer, subject: string): string[] {
  const user = createHash('sha256').update(subject).digest('base64url').slice(0, 16);
  return consumer.tokens!.userLimits.map((w) => `{${consumer.id}}:user:${user}:${w.name}`);
}

function settle(consumer: Consumer, verdict: QuotaVerdict | undefined): void {
  // Storage down: fail open, as the consumer's quota does.
  if (verdict === undefined || verdict.allowed) return;
  const windows = consumer.tokens!.userLimits;
  let pick = 0;
  for (let i = 0; i < windows.length; i++)
    if (
      verdict.windows[i].hits >= windows[i].limit &&
      verdict.windows[i].resetMs > verdict.windows[pick].resetMs
    )
      pick = i;
  const w = windows[pick];
  const retry = Math.max(1, Math.ceil(verdict.windows[pick].resetMs / 1000));
  throw GatewayError.expected('CONSUMER_RATE_LIMITED', {
    retryAfterSeconds: retry,
    message: `This user of consumer "${consumer.id}" has used their ${w.limit} requests of the "${w.name}" window; retry in ${retry} s.`,
  });
}

/**
 * The per-user quota of an end-user token (`oidc.userLimits`, keyed by the token's `sub`), counted after the
 * consumer's own: one user cannot spend the whole app's quota. Requests with a gateway key, and consumers
 * without user windows, are not counted here. 429 CONSUMER_RATE_LIMITED with `Retry-After` when over.
 */
export function admitUser(
  storage: MultiWindowThrottlerStorage,
  consumer: Consumer,
  subject: string | undefined,
): void | Promise<void> {
  if (subject === undefined || !consumer.tokens || consumer.tokens.userLimits.length === 0) return;
  const verdict = storage.hitAll(userKeys(consumer, subject), consumer.tokens.userLimits);
  if (verdict instanceof Promise) return verdict.then((v) => settle(consumer, v));
  settle(consumer, verdict);
}
