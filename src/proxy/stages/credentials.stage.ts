import { GatewayError } from '../../core/errors/gateway-error.js';
import type { ProxyRequest, ProxyResponse, Stage, UpstreamCredentials } from '../pipeline.types.js';
import { credentialStrip } from '../credential-strip.js';

export interface CredentialsStageOptions {
  readonly credentials: UpstreamCredentials;
  /**
   * Parameter names that may carry a consumer credential, stripped from the query and from write bodies as
   * any vendor stack would read them (case, `k[0]`, leading spaces, NUL tails…: `normalizeParamName`).
   */
  readonly stripParams: readonly string[];
  /** Headers that may carry a consumer credential; removed even if an earlier stage let them in. */
  readonly stripHeaders: readonly string[];
}

/**
 * Key custody on the way out: strip whatever carried the consumer's key, inject the upstream's last. On an
 * upstream auth failure the credential may refresh itself (a new session) and the call is retried once.
 * Echoes of our credential on the way back are the key-echo stage's (outside this one).
 */
export function credentialsStage(opts: CredentialsStageOptions): Stage {
  if (opts.stripParams.length === 0)
    throw new Error('credentialsStage: stripParams must name the consumer key parameters');
  const strip = credentialStrip(opts.stripParams, opts.stripHeaders);
  const { credentials } = opts;

  return (next) => {
    // Nothing to await with a synchronous credential (a static token): the upstream's promise goes back as
    // is, with no promise layer of this stage's own.
    const call = (req: ProxyRequest): Promise<ProxyResponse> => {
      let injected: void | Promise<void>;
      try {
        strip(req);
        injected = credentials.inject(req);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      const sent = injected ? injected.then(() => next(req)) : Promise.resolve(next(req));
      if (!credentials.onAccepted) return sent;
      return sent.then((res) => {
        credentials.onAccepted!(req);
        return res;
      });
    };
    if (!credentials.onAuthFailure) return call;
    return (req) => {
      // Stages outside may keep the request; the retry after a refresh must start from the consumer's query.
      const originalQuery = req.query;
      const originalHeaders = { ...req.headers };
      return call(req).catch(async (err: unknown) => {
        if (
          err instanceof GatewayError &&
          err.code === 'UPSTREAM_AUTH_FAILED' &&
          credentials.onAuthFailure &&
          (await credentials.onAuthFailure(req, err))
        ) {
          req.query = originalQuery;
          req.headers = originalHeaders;
          return call(req);
        }
        throw err;
      });
    };
  };
}
