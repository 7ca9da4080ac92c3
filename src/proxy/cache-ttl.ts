const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * TTL classes the route tables use beside each route (how long each family of data stays true). Config may override per family;
 * these are the defaults.
 */
export const CACHE_TTL = {
  /** Code lists that change rarely. */
  dictionary: 6 * HOUR,
  /** The layout tree. */
  layout: HOUR,
  /** Series data and metadata, searches over them. */
  series: 5 * MINUTE,
  /** Per-user lists (feeds, filters, dumps, user-defined series): a write may change them at any time. */
  userList: 30 * SECOND,
} as const;
