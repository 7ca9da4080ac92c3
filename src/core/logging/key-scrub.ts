const MASK = '[REDACTED]';

// Key positions as they appear in free text: header lines, query strings, JSON fragments, bearer tokens.
const HEADER_LINE =
  /\b(authorization|x-api-key|proxy-authorization|cookie)(["']?\s*[:=]\s*["']?)(?:(bearer|token|basic)\s+)?[^\s"',;&]+/gi;
const QUERY_PARAM =
  /([?&;\s"'(]|^)(token|sessionid|session_id|password|passwd|api_key|apikey|access_token)=([^&\s"',;)]+)/gi;
const JSON_FIELD =
  /"(token|sessionId|password|authorization|x-api-key|apiKey|access_token)"(\s*:\s*)"(?:[^"\\]|\\.)*"/gi;
const BEARER = /\b(bearer)\s+[A-Za-z0-9._~+/=-]{6,}/gi;

/**
 * Masks every consumer-key position in a piece of free text (a log message, an error stack). Structured log
 * fields are handled by pino's redact paths; this covers what arrives already formatted as a string.
 */
export function scrubKeyPositions(text: string): string {
  if (text.length === 0) return text;
  return text
    .replace(HEADER_LINE, (_m, name: string, sep: string, scheme?: string) =>
      scheme ? `${name}${sep}${scheme} ${MASK}` : `${name}${sep}${MASK}`,
    )
    .replace(QUERY_PARAM, (_m, pre: string, name: string) => `${pre}${name}=${MASK}`)
    .replace(JSON_FIELD, (_m, name: string, sep: string) => `"${name}"${sep}"${MASK}"`)
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`);
}
