import { etagOf } from '../../core/http/etag.js';
import type { ProxyResponse } from '../pipeline.types.js';

/**
 * A cacheable answer with the gateway's strong ETag of its bytes (the vendor's validator, if any, described
 * the vendor's bytes, not these). Computed once when the answer is stored: every hit carries it for free.
 */
export function withValidator(res: ProxyResponse): ProxyResponse {
  if (res.status !== 200 || !Buffer.isBuffer(res.body)) return res;
  return { ...res, headers: { ...res.headers, etag: etagOf(res.body) } };
}
