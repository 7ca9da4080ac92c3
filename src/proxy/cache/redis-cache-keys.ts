import type { CacheKey } from './cache-key.js';

/**
 * Where the cache keeps things in Redis, every key under `ATRIUM_REDIS_PREFIX`:
 *
 * - `<prefix>cache::{<upstream>:<credential>:<family>}:<hash>:<path>` an entry (`<expires>|<encoded entry>`);
 * - `<prefix>cache-lock:{<scope>}:<hash>` the fleet-wide in-flight marker of a key (its leader's token);
 * - `<prefix>cache-err:{<scope>}:<hash>` a failed leader's error, for a short while;
 * - `<prefix>cache-idx:{<scope>}` the entries of a scope that a write must drop;
 * - `<prefix>cache-epoch:{<scope>}` bumped by every invalidation of the scope.
 *
 * The scope (upstream, credential id, family: never a secret, and free of braces, see cache-key.ts) is the
 * hash tag of every key, so on a Redis Cluster all keys of a scope share one slot: the invalidation script
 * computes entry keys from index members, and the election reads lock, epoch and error marker together. The
 * price is that one scope's entries live on one shard; scopes spread over the shards.
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

  /** An entry's key without the head: `{scope}:hash:path`, as the scope's index lists it. */
  member(key: CacheKey): string {
    return `{${key.scope}}${key.full.slice(key.scope.length)}`;
  }

  entry(key: CacheKey): string {
    return this.entryHead + this.member(key);
  }

  lock(key: CacheKey): string {
    return `${this.prefix}cache-lock:{${key.scope}}:${key.hash}`;
  }

  error(key: CacheKey): string {
    return `${this.prefix}cache-err:{${key.scope}}:${key.hash}`;
  }

  index(scope: string): string {
    return `${this.prefix}cache-idx:{${scope}}`;
  }

  epoch(scope: string): string {
    return `${this.prefix}cache-epoch:{${scope}}`;
  }

  /** A SCAN pattern's head for the entries of one upstream (the tag opens with the upstream). */
  upstreamHead(upstream: string): string {
    return `${this.entryHead}{${upstream}:`;
  }
}
