import { GatewayError } from '../../src/core/errors/gateway-error.js';
import type { EntryAnswer, ProxyRequest, ProxyResponse } from '../../src/proxy/pipeline.types.js';

/**
 * A pipeline handler's answer as a promise: handlers answer fresh hits synchronously, the entry stage returns
 * an error it decided at once, and a handler may throw synchronously; a test reading `.then`/`.catch` wants
 * each error as a rejection.
 */
export function settled(h: (req: ProxyRequest) => EntryAnswer, req: ProxyRequest): Promise<ProxyResponse> {
  return new Promise((resolve, reject) => {
    const answer = h(req);
    if (answer instanceof GatewayError) reject(answer);
    else resolve(answer);
  });
}
