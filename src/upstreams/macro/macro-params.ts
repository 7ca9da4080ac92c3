import type { ParamRules } from '../../proxy/canonical-request.js';

/**
 * How the vendor reads the common query of every operation (spec §4.1 for the two fully specified ones; the
 * vendor's client applies the same conventions to all), for the one canonical request the gateway keys and
 * forwards. `lang` and `format` mean the same as Accept-Language and Accept: only the headers are sent, and
 * they are always sent (their stated defaults `en` and json included), so the bare call, `?lang=en` and
 * `Accept-Language: en` are one call. The other stated defaults are dropped when given.
 */
export const MACRO_COMMON_PARAMS = {
  lang: { kind: 'header' },
  format: { kind: 'header' },
  with_model_information: { kind: 'boolean', default: 'false' },
} as const satisfies ParamRules;

/** GET /feeds (spec §4.2): paging and filters. The date format is not stated: ISO dates, as the DTO reads. */
export const FEEDS_PARAMS = {
  offset: { kind: 'int', default: '0' },
  limit: { kind: 'int', default: '100' },
  created_after: { kind: 'date' },
  created_before: { kind: 'date' },
  filter_id: { kind: 'text' },
  created_order: { kind: 'text', default: 'ASC' },
  status: { kind: 'list' },
} as const satisfies ParamRules;
