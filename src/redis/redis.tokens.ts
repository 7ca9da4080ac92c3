/**
 * The shared ioredis client, or null when REDIS_URL is not set (single instance, in-memory state). In a file
 * of its own that imports nothing, so providers anywhere can inject it without importing RedisModule (which
 * imports readiness, which imports the proxy).
 */
export const REDIS_CLIENT = Symbol('RedisClient');
