import { createHash } from 'node:crypto';
import type { LiveSecret } from '../../config/atrium-config.js';
import type { SecretRedactor } from '../../core/logging/secret-redactor.js';
import type { ProxyRequest, UpstreamCredentials } from '../../proxy/pipeline.types.js';

/** Non-secret id of a credential: a short digest, enough to tell two keys apart in cache keys and logs. */
export function credentialIdOf(kind: string, secret: string): string {
  return `${kind}:${createHash('sha256').update(secret).digest('hex').slice(0, 12)}`;
}

/** Keys a rotated credential still scrubs from answers: a call sent before the change may echo one. */
const KEPT_KEYS = 3;

/**
 * A static upstream key sent as a query parameter (appended last, after the consumer's own were stripped).
 * Given as a LiveSecret (`<NAME>_FILE`), the key in force follows its file: a rotated key is used by the
 * next call, and a vendor's refusal of a read re-reads the file once and retries once (the vendor may have
 * switched keys before the file event arrived). The id stays the first key's: a rotation of the same
 * account's key keeps the cache.
 */
export class QueryTokenCredentials implements UpstreamCredentials {
  readonly id: string;
  private list: readonly string[];
  private token: string;
  onAuthFailure?: (req: ProxyRequest) => Promise<boolean>;

  constructor(
    private readonly param: string,
    token: string | LiveSecret,
    redactor?: Pick<SecretRedactor, 'register'>,
  ) {
    const live = typeof token === 'string' ? undefined : token;
    this.token = live ? live.value() : (token as string);
    if (!this.token) throw new Error('QueryTokenCredentials: token required');
    this.id = credentialIdOf(`${param}`, this.token);
    this.list = [this.token];
    if (!live) return;
    live.onChange((next) => {
      redactor?.register(next);
      this.token = next;
      this.list = [next, ...this.list.filter((k) => k !== next)].slice(0, KEPT_KEYS);
    });
    this.onAuthFailure = (req) => {
      // Reads only: a refused write is not sent twice (the vendor may have acted on it).
      if (req.method !== 'GET') return Promise.resolve(false);
      const sent = this.sentWith(req);
      // Another call re-read the file already; else read it now.
      return Promise.resolve(sent !== this.token || live.reread());
    };
  }

  inject(req: ProxyRequest): void {
    req.query.push([this.param, this.token]);
  }

  secrets(): readonly string[] {
    return this.list;
  }

  private sentWith(req: ProxyRequest): string | undefined {
    for (let i = req.query.length - 1; i >= 0; i--)
      if (req.query[i][0] === this.param) return req.query[i][1];
    return undefined;
  }
}
