import type { GatewayError } from '../../core/errors/gateway-error.js';

/** Codes the gateway itself puts in `upstreamCode` about an upstream answer: not the vendor's words. */
const GATEWAY_MADE = new Set<string | number>(['MALFORMED_BODY', 'RESPONSE_TOO_LARGE', 'CIRCUIT_OPEN']);

/**
 * The CEIC facade re-logs in and repeats on these 401 triples (upstreams.md §2.4): a gateway answer must
 * never carry one, or a client loops.
 */
const LOOP_CODES = new Set<string | number>([
  'MISSED_API_TOKEN',
  'ERR_SESSION_EXPIRED',
  'ERR_SESSION_TERMINATED',
]);

/** The vendor's own code when the vendor answered with one and a client may act on it; else the gateway's. */
function codeForClient(err: GatewayError): string | number {
  const vendor = err.upstreamCode;
  if (!err.fromUpstream || vendor === undefined || vendor === '' || GATEWAY_MADE.has(vendor)) return err.code;
  // A rejection of the gateway's own key is an operator problem, not something for the client to handle.
  if (err.code === 'UPSTREAM_AUTH_FAILED' || LOOP_CODES.has(vendor)) return err.code;
  return vendor;
}

/**
 * Beside `error`, macro error bodies carry the vendor's `errors: {status, code, message}` object so the
 * CEIC client libraries raise their own exceptions, as they do for the vendor's errors. `code` is the vendor's when the vendor
 * sent one (`INVALID_SERIES_ID`), so a client that checks codes can match; the gateway's code stays in
 * `error.code`. Never a re-login code, and the status is the gateway's, so no loop triple can form.
 */
export function macroErrorFields(err: GatewayError): Record<string, unknown> {
  return { errors: { status: err.status, code: codeForClient(err), message: err.message } };
}
