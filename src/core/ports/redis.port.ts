import type { Redis } from 'ioredis';

/**
 * The Redis port: the shared ioredis client, or null when REDIS_URL is not set (single instance, in-memory
 * state). RedisModule provides it; lower layers inject the token without importing that module.
 */
export const REDIS_CLIENT = Symbol('RedisClient');

export type RedisClient = Redis | null;
