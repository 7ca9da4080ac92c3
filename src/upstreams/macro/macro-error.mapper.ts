import type { UpstreamErrorInfo, UpstreamErrorMapper } from '../../proxy/pipeline.types.js';

/**
 * Reads CEIC's `ResponseError` (`{"errors":{"status","code","message"}}` on non-2xx, upstreams.md §2.4).
 * Tolerates an `errors` array (partial-failure shape) and any other body; never throws.
 */
export const macroErrorMapper: UpstreamErrorMapper = {
  read(_status, body): UpstreamErrorInfo {
    if (body.length === 0 || body.length > 1_000_000) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return {};
    }
    if (typeof parsed !== 'object' || parsed === null) return {};
    let e = (parsed as { errors?: unknown }).errors;
    if (Array.isArray(e)) e = e[0];
    if (typeof e !== 'object' || e === null) return {};
    const { code, message } = e as { code?: unknown; message?: unknown };
    return {
      upstreamCode: typeof code === 'string' || typeof code === 'number' ? code : undefined,
      message: typeof message === 'string' ? message : undefined,
    };
  },
};
