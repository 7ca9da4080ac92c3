import type { Cluster, Redis } from 'ioredis';
import type { SharedRedis } from '../ports/redis.port.js';

/** What a second connection changes from the shared client's settings (per node on a Cluster). */
export interface ConnectionOverrides {
  readonly connectTimeout?: number;
  readonly commandTimeout?: number;
  readonly maxRetriesPerRequest?: number | null;
  readonly autoResendUnfulfilledCommands?: boolean;
  readonly enableOfflineQueue?: boolean;
  readonly retryStrategy?: (times: number) => number;
}

export function isCluster(client: SharedRedis): client is Cluster {
  return client.isCluster;
}

/**
 * A second connection with the shared client's topology, auth and TLS (a subscriber, the cache's own). A
 * Cluster takes the per-node settings under `redisOptions` and its reconnect policy as `clusterRetryStrategy`,
 * and `duplicate` merges options shallowly, hence the split.
 */
export function duplicateConnection(client: SharedRedis, o: ConnectionOverrides): SharedRedis {
  if (!isCluster(client)) return client.duplicate({ ...o, lazyConnect: false });
  const { enableOfflineQueue, retryStrategy, ...perNode } = o;
  return client.duplicate(undefined, {
    lazyConnect: false,
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(retryStrategy ? { clusterRetryStrategy: retryStrategy } : {}),
    redisOptions: { ...client.options.redisOptions, ...perNode },
  });
}

/**
 * A connection for SUBSCRIBE only: it queues its SUBSCRIBE until connected and re-subscribes after a
 * reconnect. No command timeout: a SUBSCRIBE answered late (the process busy at boot) still subscribes, and
 * failing it would skip what the caller does once subscribed.
 */
export function subscriberConnection(client: SharedRedis): SharedRedis {
  return duplicateConnection(client, { enableOfflineQueue: true, commandTimeout: undefined });
}

/** Every master of a Cluster (a SCAN must visit each), or the one server. */
export function masters(client: SharedRedis): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}
