/**
 * The Retry-After parser's own bound, a day (core/http/retry-after.ts): also the highest value the cooldown
 * maximum may be configured to (`UPSTREAM_<NAME>_COOLDOWN_MAX_SECONDS`), so no header and no setting can wait
 * longer. Kept here because config is the bottom layer: core reads config, never the other way round.
 */
export const RETRY_AFTER_CEILING_SECONDS = 86_400;
