import type { ProxyRequest, ProxyResponse } from '../../src/proxy/pipeline.types.js';

/** A pipeline handler's answer as a promise, a synchronous throw (a stage's bad options) as a rejection. */
export function settled(
  h: (req: ProxyRequest) => Promise<ProxyResponse>,
  req: ProxyRequest,
): Promise<ProxyResponse> {
  return new Promise((resolve, reject) => {
    h(req).then(resolve, reject);
  });
}
