import { pathOfKey } from './cache-key.js';
import type { RedisCacheKeys } from './redis-cache-keys.js';
import type { CacheRedis } from './redis-cache-connection.js';

const GLOB = /[*?[\]\\]/g;

/**
 * Drops the entries of an upstream, optionally only those whose upstream path starts with `pathPrefix` (an
 * operator action). It SCANs the namespace: the upstream and the path are readable in the key, so no index
 * is needed for this rare action.
 */
export async function purgeEntries(
  redis: CacheRedis,
  keys: RedisCacheKeys,
  upstream: string,
  pathPrefix?: string,
): Promise<number> {
  const head = keys.entryHead;
  const match = `${head}${upstream}:`.replace(GLOB, (c) => '\\' + c) + '*';
  let purged = 0;
  let cursor = '0';
  do {
    const [next, found] = await redis.call<[string, string[]]>('SCAN', cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = String(next);
    const doomed =
      pathPrefix === undefined
        ? found
        : found.filter((k) => pathOfKey(k.slice(head.length)).startsWith(pathPrefix));
    if (doomed.length > 0) purged += await redis.call<number>('UNLINK', ...doomed);
  } while (cursor !== '0');
  return purged;
}
