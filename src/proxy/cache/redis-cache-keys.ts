import type { CacheKey } from './cache-key.js';

/**
 * Where the cache keeps things in Redis, every key under `ATRIUM_REDIS_PREFIX`:
 *
 * - `<prefix>cache::<upstream>:<credential>:<family>:<hash>:<path>` an entry (`<expires>|<encoded entry>`,
 *   the format the keyv-based store wrote, so replicas of either version read each other's entries);
 * - `<prefix>cache-lock:<scope>:<hash>` the fleet-wide in-flight marker of a key (its leader's token);
 * - `<prefix>cache-err:<scope>:<hash>` a failed leader's error, for a short while;
 * - `<prefix>cache-idx:<scope>` the entries of a scope that a write must drop;
 * - `<prefix>cache-epoch:<scope>` bumped by every invalidation of the scope.
 *
 * The invalidation script computes entry keys from index members, so the cache assumes one Redis (not a
 * cluster), like the rest of Atrium's shared state.
 */
export class RedisCacheKeys {
  /** `<prefix>cache`: what `/health/ready` shows as the cache's namespace. */
  readonly namespace: string;
  /** What every entry key starts with. */
  readonly entryHead: string;

  constructor(private readonly prefix: string) {
    this.namespace = `${prefix}cache`;
    this.entryHead = `${this.namespace}::`;
  }

  entry(key: CacheKey): string {
    return this.entryHead + key.full;
  }

  lock(key: CacheKey): string {
    return `${this.prefix}cache-lock:${key.lockId}`;
  }

  error(key: CacheKey): string {
    return `${this.prefix}cache-err:${key.lockId}`;
  }

  index(scope: string): string {
    return `${this.prefix}cache-idx:${scope}`;
  }

  epoch(scope: string): string {
    return `${this.prefix}cache-epoch:${scope}`;
  }
}
