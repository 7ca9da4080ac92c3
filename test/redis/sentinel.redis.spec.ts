import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { loadConfig } from '../../src/config/atrium-config.js';
import { createRedisClient } from '../../src/redis/redis.module.js';
import { RedisServer } from '../helpers/redis-server.js';
import { eventually } from '../helpers/eventually.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';
import { describeNeeding } from '../helpers/system-parts.js';

const PASSWORD = 'sentinel-test-password-5b1c';
/** What any configuration needs beside Redis: one interface served, and the fleet's one link secret. */
const BASE = {
  UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9',
  UPSTREAM_MACRO_TOKEN: 'sbx_macro_sentinel_01',
  ATRIUM_LINK_SECRET: 'sentinel-test-link-secret-0123456789abcdef',
};

/** The Sentinel topology by configuration: REDIS_SENTINELS + REDIS_SENTINEL_MASTER, with the servers' auth. */
describeNeeding(
  'redis-server',
  'Redis Sentinel by configuration (a private master and sentinel on loopback)',
  () => {
    let dir: string;
    let master: RedisServer | undefined;
    let sentinel: RedisServer | undefined;
    let sentinelPort = 0;
    let client: Redis | undefined;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'atrium-sentinel-'));
      master = new RedisServer({ args: ['--requirepass', PASSWORD, '--masterauth', PASSWORD] });
      await master.start();
      const conf = join(dir, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `sentinel monitor atrium-master 127.0.0.1 ${master.port} 1`,
          `sentinel auth-pass atrium-master ${PASSWORD}`,
          'sentinel down-after-milliseconds atrium-master 1000',
        ].join('\n') + '\n',
      );
      sentinel = new RedisServer({ config: conf, args: ['--sentinel'] });
      await sentinel.start();
      sentinelPort = sentinel.port;
    });
    afterAll(async () => {
      client?.disconnect();
      await sentinel?.stop();
      await master?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('reads the topology from the environment and refuses half of it', () => {
      const env = {
        ...BASE,
        ATRIUM_CONSUMERS_FILE: '/dev/null',
        REDIS_SENTINELS: `127.0.0.1:${sentinelPort}, sentinel-2.internal:26379`,
        REDIS_SENTINEL_MASTER: 'atrium-master',
        REDIS_PASSWORD: PASSWORD,
      };
      const c = loadConfig(env, UPSTREAMS);
      expect(c.redis).toEqual({
        kind: 'sentinel',
        sentinels: [
          { host: '127.0.0.1', port: sentinelPort },
          { host: 'sentinel-2.internal', port: 26379 },
        ],
        master: 'atrium-master',
        password: PASSWORD,
        tls: false,
        commandTimeoutMs: 100,
      });
      expect(() => loadConfig({ ...BASE, REDIS_SENTINELS: '127.0.0.1:26379' }, UPSTREAMS)).toThrow(
        /REDIS_SENTINEL_MASTER/,
      );
      expect(() =>
        loadConfig({ ...BASE, REDIS_SENTINELS: 'nope', REDIS_SENTINEL_MASTER: 'm' }, UPSTREAMS),
      ).toThrow(/REDIS_SENTINELS \(expected host:port/);
      expect(loadConfig({ ...BASE, REDIS_URL: 'redis://127.0.0.1:6379' }, UPSTREAMS).redis).toEqual({
        kind: 'url',
        url: 'redis://127.0.0.1:6379',
        commandTimeoutMs: 100,
      });
    });

    it('reaches the master the sentinel names, with the servers password and a short command timeout', async () => {
      const c = loadConfig(
        {
          ...BASE,
          REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`,
          REDIS_SENTINEL_MASTER: 'atrium-master',
          REDIS_PASSWORD: PASSWORD,
        },
        UPSTREAMS,
      );
      client = createRedisClient(c.redis!) as Redis; // Sentinel: one master, a plain client
      await eventually(() => client!.status === 'ready', { timeoutMs: 10_000, what: 'the client is ready' });
      expect(client.options.commandTimeout).toBe(100);
      await client.set('atrium-sentinel-test', 'ok');
      expect(await client.get('atrium-sentinel-test')).toBe('ok');
      const info = String(await client.call('INFO', 'server'));
      expect(info).toContain(`tcp_port:${master!.port}`);
    });
  },
);
