import type { ErrorShapeExtension } from '../../core/errors/error-shape.registry.js';
import type { GatewayError } from '../../core/errors/gateway-error.js';
import type { SecretRedactor } from '../../core/logging/secret-redactor.js';

/** The integer code the EMIS client gets: the vendor's own for an upstream error, else the HTTP status. */
export function emisCodeOf(err: GatewayError): number {
  const c = err.upstreamCode;
  if (typeof c === 'number' && Number.isInteger(c)) return c;
  if (typeof c === 'string' && /^-?\d{1,9}$/.test(c)) return Number(c);
  return err.status;
}

/**
 * Beside `error`, every error body under the EMIS prefixes carries `errors: [{code: <integer>, detail}]`
 * so the vendor's own client can read a gateway error: the EMIS client ignores HTTP statuses, reads `errors` first, and dies on an
 * object or a non-numeric code. Gateway-made errors (401, 403, 404, 429, 5xx) included.
 */
export function emisErrorShape(
  prefixes: readonly string[],
  redactor: Pick<SecretRedactor, 'redact'>,
): ErrorShapeExtension {
  return {
    prefixes,
    extend: (err) => ({ errors: [{ code: emisCodeOf(err), detail: redactor.redact(err.message) }] }),
  };
}
