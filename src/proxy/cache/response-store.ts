import type { CacheEntry } from './cache-entry.js';
import type { CacheKey } from './cache-key.js';

/**
 * The role a process takes for a miss, decided before any upstream call.
 * - `leader`: it calls the upstream; `token` guards the store against a write that lands meanwhile.
 * - `follower`: another replica holds the fleet-wide in-flight marker; wait for its result.
 * - `local`: no fleet coordination (memory store, or Redis unavailable); call the upstream.
 */
export type MissRole =
  | { readonly role: 'leader'; readonly token: string; readonly lease: Lease }
  | { readonly role: 'follower'; readonly holder: string }
  | { readonly role: 'local'; readonly token: string | undefined };

/** The fleet-wide in-flight marker a leader holds while its upstream call runs. */
export interface Lease {
  /** Drops the marker (after the result is stored, so waiters find it). */
  release(): Promise<void>;
  /** Drops the marker and leaves a short-lived error marker so waiters on other replicas fail at once. */
  fail(err: unknown): Promise<void>;
}

/** What a follower's wait ended with. */
export type WaitResult =
  | { readonly kind: 'entry'; readonly entry: CacheEntry }
  | { readonly kind: 'error'; readonly error: Error }
  /** The marker is gone without a result (leader died, or its answer was not storable): contend again. */
  | { readonly kind: 'retry' };

export interface StoreStats {
  readonly store: 'memory' | 'redis';
  readonly available: boolean;
  readonly [k: string]: unknown;
}

/**
 * A response store (memory, or Redis for a fleet). Every method is total: store trouble (Redis down or slow) makes a
 * read a miss and a write a no-op, never a failed request.
 */
export interface ResponseStore {
  readonly kind: 'memory' | 'redis';
  get(key: CacheKey): Promise<CacheEntry | undefined>;
  /** `get` without a promise, for stores that hold entries in this process (a hit then never waits). */
  getSync?(key: CacheKey): CacheEntry | undefined;
  /** Stores unless a write invalidated the scope after `token` was taken; true when stored. */
  set(
    key: CacheKey,
    entry: CacheEntry,
    retainMs: number,
    token: string | undefined,
    indexed: boolean,
  ): Promise<boolean>;
  /** Decides who calls the upstream for a miss (see MissRole). */
  beginMiss(key: CacheKey): Promise<MissRole>;
  /** Waits for another replica's in-flight call for `key`. */
  waitFor(
    key: CacheKey,
    holder: string,
    previousId: string | undefined,
    deadline: number,
  ): Promise<WaitResult>;
  /** Drops every entry of a scope (`upstream:credential:family`): after a successful write. */
  invalidate(scope: string): Promise<void>;
  /** Drops the entries of an upstream, optionally only those whose upstream path starts with `pathPrefix`. */
  purge(upstream: string, pathPrefix?: string): Promise<number>;
  stats(): Promise<StoreStats>;
  close(): Promise<void>;
}

export const RESPONSE_STORE = Symbol('ResponseStore');
