import type { Cluster, Redis } from 'ioredis';

/**
 * The Redis port: the shared ioredis client, or null when no Redis is configured (single instance, in-memory
 * state). RedisModule provides it; lower layers inject the token without importing that module.
 */
export const REDIS_CLIENT = Symbol('RedisClient');

/**
 * One server (by URL or the master Sentinel names) or a Redis Cluster. Both speak the same commands to Atrium:
 * every multi-key script and pipeline keeps its keys under one hash tag (core/redis/redis-keys.ts).
 */
export type SharedRedis = Redis | Cluster;

export type RedisClient = SharedRedis | null;
