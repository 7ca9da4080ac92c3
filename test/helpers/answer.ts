import type { Answer, ProxyRequest, ProxyResponse } from '../../src/proxy/pipeline.types.js';

/**
 * A pipeline handler's answer as a promise: handlers answer fresh hits synchronously and may throw
 * synchronously, which a test reading `.then`/`.catch` wants as a rejection.
 */
export function settled(h: (req: ProxyRequest) => Answer, req: ProxyRequest): Promise<ProxyResponse> {
  return new Promise((resolve) => resolve(h(req)));
}
