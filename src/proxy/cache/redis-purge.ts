import { pathOfKey } from './cache-key.js';
import type { RedisCacheKeys } from './redis-cache-keys.js';
import { withTimeout, type CacheRedis } from './redis-cache-connection.js';
import { isCluster, masters } from '../../core/redis/redis-connection.js';

const GLOB = /[*?[\]\\]/g;

/**
 * Drops the entries of an upstream, optionally only those whose upstream path starts with `pathPrefix` (an
 * operator action). It SCANs the namespace on every master (a Cluster's keys are spread over its shards): the
 * upstream and the path are readable in the key, so no index is needed for this rare action.
 */
export async function purgeEntries(
  redis: CacheRedis,
  keys: RedisCacheKeys,
  upstream: string,
  pathPrefix?: string,
): Promise<number> {
  const head = keys.entryHead;
  const match = keys.upstreamHead(upstream).replace(GLOB, (c) => '\\' + c) + '*';
  // Keys of several scopes are in several slots: a Cluster takes them one UNLINK each (pipelined).
  const cluster = isCluster(redis.client);
  let purged = 0;
  for (const node of masters(redis.client)) {
    let cursor = '0';
    do {
      const [next, found] = await withTimeout(
        node.scan(cursor, 'MATCH', match, 'COUNT', 1000),
        redis.timeoutMs * 10,
      );
      cursor = String(next);
      const doomed =
        pathPrefix === undefined
          ? found
          : found.filter((k) => pathOfKey(untagged(k.slice(head.length))).startsWith(pathPrefix));
      if (doomed.length === 0) continue;
      if (!cluster) purged += await redis.call<number>('UNLINK', ...doomed);
      else {
        const replies = await withTimeout(
          node.pipeline(doomed.map((k) => ['unlink', k])).exec(),
          redis.timeoutMs * 10,
        );
        for (const [err, n] of replies ?? []) if (!err) purged += Number(n);
      }
    } while (cursor !== '0');
  }
  return purged;
}

/** `{scope}:hash:path` → `scope:hash:path` (the scope holds no braces; the path may). */
function untagged(member: string): string {
  return member.startsWith('{') ? member.slice(1).replace('}', '') : member;
}
