/** An internal app allowed to call the gateway. Loaded from the consumers file (see README). */
export interface ConsumerLimit {
  /** Name of the window, e.g. `per-second`. */
  readonly name: string;
  readonly ttlMs: number;
  readonly limit: number;
}

export interface Consumer {
  readonly id: string;
  /** SHA-256 digests of the consumer's keys. */
  readonly keyHashes: readonly Buffer[];
  readonly upstreams: ReadonlySet<string>;
  /** May use POST/PUT/PATCH/DELETE. */
  readonly write: boolean;
  readonly limits: readonly ConsumerLimit[];
  /** Share of a scarce upstream budget relative to other consumers (default 1). */
  readonly weight: number;
  /** Fraction (0–1) of each upstream budget kept for this consumer when it is short. */
  readonly reservedShare: number;
  /** Browser origins allowed to call with this consumer's key (CORS). */
  readonly corsOrigins: readonly string[];
  /**
   * Sandbox only (the demo consumer): any `http://localhost:<port>` and `http://127.0.0.1:<port>` origin
   * is allowed too. Never read from the consumers file, so production CORS stays an explicit list.
   */
  readonly corsAnyLocalPort?: boolean;
}

/** Where consumers' keys may arrive, in the order they are looked for. */
export const CONSUMER_KEY_HEADERS = ['x-api-key', 'authorization'] as const;
/**
 * The guard reads a key from exactly these names (and `name[0]`); the credentials stage strips every name a
 * vendor may read as one of them (`normalizeParamName`), so each position the guard reads is also stripped.
 */
export const CONSUMER_KEY_QUERY_PARAMS = ['token', 'sessionId'] as const;
