import type { Redis } from 'ioredis';
import { createRedisClient } from '../../src/redis/redis.module.js';

/** The gateway's own client settings (no offline queue), once it is connected. */
export async function connectedRedis(url: string): Promise<Redis> {
  const client = createRedisClient(url);
  client.on('error', () => undefined);
  if (client.status !== 'ready')
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Redis at ${url} not ready`)), 3000);
      client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  return client;
}

export async function closeRedis(...clients: Array<Redis | undefined>): Promise<void> {
  for (const c of clients) {
    if (!c) continue;
    try {
      await c.quit();
    } catch {
      c.disconnect();
    }
  }
}
