import { Readable } from 'node:stream';
import { GatewayError } from '../../core/errors/gateway-error.js';
import type { SecretRedactor } from '../../core/logging/secret-redactor.js';
import type { Stage, UpstreamCredentials } from '../pipeline.types.js';
import { credentialStrip } from './credential-strip.js';

export interface CredentialsStageOptions {
  readonly credentials: UpstreamCredentials;
  /**
   * Parameter names that may carry a consumer credential, stripped from the query and from write bodies as
   * any vendor stack would read them (case, `k[0]`, leading spaces, NUL tails…: `normalizeParamName`).
   */
  readonly stripParams: readonly string[];
  /** Headers that may carry a consumer credential; removed even if an earlier stage let them in. */
  readonly stripHeaders: readonly string[];
  readonly redactor: SecretRedactor;
  /** Called with the number of key echoes scrubbed from an answer (metrics). */
  readonly onScrub?: (count: number) => void;
}

const MASK = Buffer.from('[REDACTED]');

function replaceAll(body: Buffer, secret: Buffer): { body: Buffer; count: number } {
  let idx = body.indexOf(secret);
  if (idx === -1) return { body, count: 0 };
  const parts: Buffer[] = [];
  let start = 0;
  let count = 0;
  while (idx !== -1) {
    parts.push(body.subarray(start, idx), MASK);
    start = idx + secret.length;
    count++;
    idx = body.indexOf(secret, start);
  }
  parts.push(body.subarray(start));
  return { body: Buffer.concat(parts), count };
}

/**
 * Key custody in one place: strip whatever carried the consumer's key, inject the upstream's last, and on
 * the way back scrub any echo of our key from the answer and from error messages. On an upstream auth
 * failure the credential may refresh itself (a new session) and the call is retried once.
 */
export function credentialsStage(opts: CredentialsStageOptions): Stage {
  if (opts.stripParams.length === 0)
    throw new Error('credentialsStage: stripParams must name the consumer key parameters');
  const strip = credentialStrip(opts.stripParams, opts.stripHeaders);
  const { credentials, redactor } = opts;
  // Secret buffers are rebuilt only when the credential's secrets change (a new session), not per request.
  let lastSecrets: readonly string[] = [];
  let secretBuffers: Buffer[] = [];
  const buffers = (): Buffer[] => {
    const current = credentials.secrets();
    if (current !== lastSecrets) {
      lastSecrets = current;
      secretBuffers = current.filter((s) => s.length > 0).map((s) => Buffer.from(s));
    }
    return secretBuffers;
  };

  return (next) => {
    const call: typeof next = async (req) => {
      strip(req);
      await credentials.inject(req);
      const res = await next(req);
      credentials.onAccepted?.(req);
      return res;
    };
    return async (req) => {
      // Stages outside may keep the request; the retry after a refresh must start from the consumer's query.
      const originalQuery = req.query;
      const originalHeaders = { ...req.headers };
      let res;
      try {
        try {
          res = await call(req);
        } catch (err) {
          if (
            err instanceof GatewayError &&
            err.code === 'UPSTREAM_AUTH_FAILED' &&
            credentials.onAuthFailure &&
            (await credentials.onAuthFailure(req, err))
          ) {
            req.query = originalQuery;
            req.headers = originalHeaders;
            res = await call(req);
          } else throw err;
        }
      } catch (err) {
        if (err instanceof GatewayError) {
          const clean = redactor.redact(err.message);
          if (clean !== err.message) {
            opts.onScrub?.(1);
            Object.defineProperty(err, 'message', { value: clean });
          }
        }
        throw err;
      }
      if (!(res.body instanceof Readable)) {
        let body = res.body;
        let scrubbed = 0;
        for (const secret of buffers()) {
          const r = replaceAll(body, secret);
          body = r.body;
          scrubbed += r.count;
        }
        if (scrubbed > 0) {
          opts.onScrub?.(scrubbed);
          res = { ...res, body };
        }
      }
      return res;
    };
  };
}
