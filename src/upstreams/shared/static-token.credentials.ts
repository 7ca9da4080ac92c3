import { createHash } from 'node:crypto';
import type { ProxyRequest, UpstreamCredentials } from '../../proxy/pipeline.types.js';

/** Non-secret id of a credential: a short digest, enough to tell two keys apart in cache keys and logs. */
export function credentialIdOf(kind: string, secret: string): string {
  return `${kind}:${createHash('sha256').update(secret).digest('hex').slice(0, 12)}`;
}

/** A static upstream key sent as a query parameter (appended last, after the consumer's own were stripped). */
export class QueryTokenCredentials implements UpstreamCredentials {
  readonly id: string;
  private readonly list: readonly string[];

  constructor(
    private readonly param: string,
    private readonly token: string,
  ) {
    if (!token) throw new Error('QueryTokenCredentials: token required');
    this.id = credentialIdOf(`${param}`, token);
    this.list = [token];
  }

  inject(req: ProxyRequest): void {
    req.query.push([this.param, this.token]);
  }

  secrets(): readonly string[] {
    return this.list;
  }
}
