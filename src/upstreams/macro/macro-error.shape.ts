import type { ErrorShapeExtension } from '../../core/errors/error-shape.registry.js';

/**
 * Beside `error`, macro error bodies carry the vendor's `errors: {status, code, message}` object so the
 * CEIC client libraries raise their own exceptions (architecture §6). The code is the gateway's (the vendor's
 * stays in `error.upstreamCode`), so it never matches one of the facade's re-login triples and cannot loop.
 */
export const macroErrorShape: ErrorShapeExtension = {
  prefixes: ['macro'],
  extend: (err) => ({
    errors: {
      status: err.status,
      code: err.code,
      message: err.message,
    },
  }),
};
