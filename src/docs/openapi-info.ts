// The document's info block: the contract version and the overview readers see first.

/** Version of the gateway's HTTP contract (not of the package): bump it when the surface changes incompatibly. */
export const API_VERSION = '1.0.0';

/** The document's description: keys, paths, errors and caching in one screen. */
export const DESCRIPTION = `One front door to the macroeconomic (CEIC v2), company (EMIS v2), document and deal (EMIS) data interfaces.

**Keys.** Send your gateway key as \`Authorization: Bearer <key>\`, \`X-API-Key: <key>\`, or the \`token\` query
parameter (the vendors' own clients keep working with only host and key changed). The gateway removes it and
uses its own vendor key; no vendor key ever reaches you.

**Paths.** Each interface lives under its prefix with the vendor's paths unchanged (\`/macro/feeds\`,
\`/documents/Search/query/\`); \`/news\` and \`/dw\` are aliases of \`/documents\` and \`/deals\`.

**Errors.** Every failure has one envelope, \`{"error": {code, message, status, retryable, requestId, …}}\` (see
\`ErrorEnvelope\`), with \`Retry-After\` on 429s.

**Caching.** Cacheable GETs say how they were served in \`X-Cache\` and \`Age\`; send \`Cache-Control: no-cache\` to
force a fresh answer.`;
