const MASK = '[REDACTED]';

// Key positions as they appear in free text: header lines, query strings (also URL-encoded), JSON fragments
// (also JSON-escaped), bearer tokens. The secrets themselves, in every form, are the SecretRedactor's job.
const HEADER_LINE =
  /\b(authorization|x-api-key|proxy-authorization|cookie)(["']?\s*[:=]\s*["']?)(?:(bearer|token|basic)\s+)?[^\s"',;&]+/gi;
// Also inside a URL that was itself URL-encoded (`%3Ftoken%3D…%26`): the value runs to `&` or `%26`.
const QUERY_PARAM =
  /([?&;\s"'(]|^|%3F|%26)(token|sessionid|session_id|password|passwd|api_key|apikey|access_token)(=|%3D)(?:[^&\s"',;)%]|%(?!26)[0-9A-Fa-f]{2}|%(?![0-9A-Fa-f]{2}))+/gi;
const JSON_FIELD =
  /"(token|sessionId|password|authorization|x-api-key|apiKey|access_token)"(\s*:\s*)"(?:[^"\\]|\\.)*"/gi;
// The same inside a JSON string (a JSON answer quoted in a message): `{\"token\":\"…\"}`.
const JSON_FIELD_ESCAPED =
  /\\"(token|sessionId|password|authorization|x-api-key|apiKey|access_token)\\"(\s*:\s*)\\"(?:[^"\\]|\\[^"])*\\"/gi;
const BEARER = /\b(bearer)\s+[A-Za-z0-9._~+/=-]{6,}/gi;
// An end-user token (JWT) anywhere in a text: its header and payload are base64url JSON (`eyJ` is `{"`).
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;

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
    .replace(QUERY_PARAM, (_m, pre: string, name: string, eq: string) => `${pre}${name}${eq}${MASK}`)
    .replace(JSON_FIELD, (_m, name: string, sep: string) => `"${name}"${sep}"${MASK}"`)
    .replace(JSON_FIELD_ESCAPED, (_m, name: string, sep: string) => `\\"${name}\\"${sep}\\"${MASK}\\"`)
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`)
    .replace(JWT, MASK);
}
