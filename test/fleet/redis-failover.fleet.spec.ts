import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import {
  cleanEnv,
  http,
  type HttpResult,
  type SpawnedGateway,
  spawnGateway,
  writeConsumersFile,
} from '../helpers/gateway.js';
import { describeNeeding } from '../helpers/system-parts.js';
import { RedisCluster, redisCli } from '../helpers/redis-cluster.js';
import { RedisServer } from '../helpers/redis-server.js';
import { writeSuiteResults, type CaseResult } from '../helpers/results.js';

// Fleet failover: three `node dist/main.js` replicas under steady load (hits, misses, writes with unique
// markers) while their Redis fails: a Cluster master killed, a Sentinel master killed, or the one server gone
// for 30 s and back. Each case prints one figures line and asserts the targets.

const TOKEN = 'fleet-failover-macro-token-7c1d';
const RATE = 20;
const BURST = 20;
const DEADLINE_MS = 2000;
const SLACK_MS = 100;
const GAP_MS = 30_000;

interface Shot {
  readonly at: number;
  readonly ms: number;
  readonly status: number;
  readonly kind: 'hit' | 'miss' | 'write';
}

describeNeeding(
  'redis-server',
  'fleet failover: Cluster and Sentinel masters killed, Redis gone and back',
  () => {
    const app = testConsumer({ id: 'fleet-app', write: true, upstreams: new Set(['macro']) });
    const fake = new FakeMacroUpstream({ token: TOKEN });
    const dir = mkdtempSync(join(tmpdir(), 'atrium-failover-'));
    const consumersFile = writeConsumersFile(dir, [app.consumer]);
    const auth = { authorization: `Bearer ${app.key}` };
    let fleet: SpawnedGateway[] = [];
    const figures: string[] = [];
    // The hardening summary's state-fault rows (printed by `npm run test:hardening` and a full `npm test`).
    const cases: CaseResult[] = [];
    const counters = {
      gateway5xx: 0,
      duplicatedVendorWrites: 0,
      answersPastDeadline: 0,
      vendorCallsOverBudgetInFault: 0,
      faultsSharedAfter5s: 0,
    };
    const startedAt = Date.now();

    beforeAll(() => fake.start());
    afterAll(async () => {
      await Promise.all(fleet.map((g) => g.stop()));
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
      // One line per fault, for the closing note.
      if (figures.length) process.stdout.write(`\nRedis failover figures:\n${figures.join('\n')}\n`);
      writeSuiteResults({
        suite: 'failover',
        finishedAt: new Date().toISOString(),
        durationMs: Date.now() - startedAt,
        counters: {
          ...counters,
          stateFaultsTotal: cases.length,
          stateFaultsSurvived: cases.filter((c) => c.survived).length,
        },
        cases,
        notes: figures,
      });
    });

    async function startFleet(redisEnv: Record<string, string>): Promise<void> {
      const env = cleanEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        ATRIUM_CONSUMERS_FILE: consumersFile,
        ATRIUM_LINK_SECRET: 'fleet-failover-link-secret-0123456789abcdef',
        ATRIUM_REDIS_PREFIX: `atrium-failover:${Date.now()}:`,
        UPSTREAM_MACRO_BASE_URL: fake.url,
        UPSTREAM_MACRO_TOKEN: TOKEN,
        UPSTREAM_MACRO_TIMEOUT_MS: String(DEADLINE_MS),
        UPSTREAM_MACRO_RATE_PER_SEC: String(RATE),
        UPSTREAM_MACRO_BURST: String(BURST),
        UPSTREAM_MACRO_MAX_WAIT_MS: '500',
        ATRIUM_CACHE_STALE_WHILE_REVALIDATE_MS: '0',
        ATRIUM_CACHE_STALE_IF_ERROR_MS: '0',
        ...redisEnv,
      });
      fleet = await Promise.all([0, 1, 2].map(() => spawnGateway(env, 40_000)));
    }

    async function stopFleet(): Promise<void> {
      await Promise.all(fleet.map((g) => g.stop()));
      fleet = [];
    }

    /** Every replica on the shared budget and the shared cache (from its own account). */
    async function allShared(): Promise<boolean> {
      for (const g of fleet) {
        const r = await http(g.url + '/health/ready');
        const macro = r.json().upstreams.find((u: { name: string }) => u.name === 'macro');
        if (macro.budget !== 'shared' || /"available":false/.test(r.text)) return false;
      }
      return true;
    }

    /** Steady load over the fleet until stop(): hits, misses and writes (each write a unique marker). */
    function load() {
      const shots: Shot[] = [];
      const markers: string[] = [];
      let running = true;
      let n = 0;
      const one = async (kind: Shot['kind']): Promise<void> => {
        const g = fleet[n++ % fleet.length];
        const t0 = performance.now();
        let r: HttpResult;
        if (kind === 'write') {
          const marker = `m${Date.now()}x${n}`;
          markers.push(marker);
          r = await http(`${g.url}/macro/feeds/${feed}`, {
            method: 'PATCH',
            headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
            body: `name=${marker}`,
          });
        } else
          r = await http(
            kind === 'hit' ? `${g.url}/macro/layout/tables/TB1207` : `${g.url}/macro/series/${9_000_000 + n}`,
            { headers: auth },
          );
        shots.push({ at: Date.now(), ms: performance.now() - t0, status: r.status, kind });
      };
      const workers = (['hit', 'hit', 'miss', 'write'] as const).map(async (kind) => {
        while (running) {
          await one(kind);
          await new Promise((res) => setTimeout(res, 25));
        }
      });
      return {
        shots,
        markers,
        /** Waits until `count` more answers have come back than now (load before and after a fault). */
        async answered(count: number) {
          const target = shots.length + count;
          await eventually(() => shots.length >= target, {
            timeoutMs: 20_000,
            intervalMs: 20,
            what: `${count} answers`,
          });
        },
        async stop() {
          running = false;
          await Promise.all(workers);
        },
      };
    }

    let feed = '';
    async function feedId(): Promise<void> {
      // The writes patch one feed of the fake's data set.
      const r = await http(`${fleet[0].url}/macro/feeds?limit=1`, { headers: auth });
      expect(r.status).toBe(200);
      feed = String(r.json().data[0].id);
    }

    function judge(
      fault: string,
      l: ReturnType<typeof load>,
      gap: { from: number; to: number },
      backMs: number,
    ): void {
      const during = l.shots.filter((s) => s.at >= gap.from && s.at <= gap.to + DEADLINE_MS);
      const fivexx = l.shots.filter((s) => s.status >= 500);
      const unauthorized = l.shots.filter((s) => s.status === 401 || s.status === 403);
      const vendorCalls = fake.requests.filter((r) => r.at >= gap.from && r.at <= gap.to).length;
      const allowance = Math.ceil((RATE * (gap.to - gap.from)) / 1000) + BURST;
      const arrivals = new Map<string, number>();
      for (const r of fake.requests)
        if (r.method === 'PATCH') {
          const m = /name=(m\d+x\d+)/.exec(r.body.toString());
          if (m) arrivals.set(m[1], (arrivals.get(m[1]) ?? 0) + 1);
        }
      const duplicated = [...arrivals.values()].filter((c) => c > 1).length;
      const longest = Math.round(Math.max(0, ...during.map((s) => s.ms)));
      figures.push(
        `${fault}: requests ${l.shots.length} (${during.length} during the fault), 5xx ${fivexx.length}, ` +
          `401/403 ${unauthorized.length}, vendor calls in the gap ${vendorCalls} (budget ${allowance}), ` +
          `duplicated writes ${duplicated}, longest request ${longest} ms (deadline ${DEADLINE_MS}), ` +
          `shared again after ${(backMs / 1000).toFixed(2)} s`,
      );
      const late = during.filter((s) => s.ms > DEADLINE_MS + SLACK_MS).length;
      const failures = [
        ...(during.length === 0 ? ['no request fell in the fault'] : []),
        ...(fivexx.length ? [`${fivexx.length} gateway 5xx`] : []),
        ...(unauthorized.length ? [`${unauthorized.length} refused 401/403`] : []),
        ...(vendorCalls > allowance ? [`${vendorCalls} vendor calls in the gap (budget ${allowance})`] : []),
        ...(duplicated ? [`${duplicated} duplicated writes`] : []),
        ...(late ? [`${late} answers past the deadline + ${SLACK_MS} ms`] : []),
        ...(backMs > 5000 ? [`shared again only after ${backMs} ms`] : []),
      ];
      cases.push({ name: fault, survived: failures.length === 0, failures });
      counters.gateway5xx += fivexx.length;
      counters.duplicatedVendorWrites += duplicated;
      counters.answersPastDeadline += late;
      counters.vendorCallsOverBudgetInFault += Math.max(0, vendorCalls - allowance);
      counters.faultsSharedAfter5s += backMs > 5000 ? 1 : 0;
      expect(during.length).toBeGreaterThan(0);
      expect(fivexx.map((s) => `${s.kind} ${s.status}`)).toEqual([]);
      expect(unauthorized).toEqual([]);
      expect(vendorCalls).toBeLessThanOrEqual(allowance);
      expect(duplicated).toBe(0);
      expect(longest).toBeLessThanOrEqual(DEADLINE_MS + SLACK_MS);
      expect(backMs).toBeLessThanOrEqual(5000);
    }

    /** Every replica's heartbeat has seen the whole fleet: its share while Redis is away is 1 ÷ the fleet. */
    async function allCounted(): Promise<boolean> {
      for (const g of fleet) {
        const r = await http(g.url + '/health/ready');
        const macro = r.json().upstreams.find((u: { name: string }) => u.name === 'macro');
        if (Math.abs(macro.fallbackShare - 1 / fleet.length) > 1e-3) return false;
      }
      return true;
    }

    /**
     * A fleet on `redisEnv`, once every replica shares its state and knows the fleet's size (a replica that
     * started last is counted by the others at their next heartbeat; until then each would spend a larger
     * share, by design, and the budget judged below assumes the fleet's size is known).
     */
    async function startSharedFleet(redisEnv: Record<string, string>): Promise<void> {
      await startFleet(redisEnv);
      await eventually(allShared, { timeoutMs: 20_000, what: 'the fleet shares its state' });
      await eventually(allCounted, { timeoutMs: 20_000, what: 'every replica counts the whole fleet' });
    }

    /**
     * The shape of every case: steady load, `fault` under it (resolving once the fault is over), the time
     * until the fleet shares its state again, more load, then the judgement.
     */
    async function faultUnderLoad(name: string, fault: () => Promise<void>): Promise<void> {
      fake.reset();
      await feedId();
      fake.reset();
      const l = load();
      await l.answered(100);
      const from = Date.now();
      await fault();
      const to = Date.now();
      await eventually(allShared, { timeoutMs: 20_000, intervalMs: 100, what: 'shared again' });
      const backMs = Date.now() - to;
      await l.answered(50);
      await l.stop();
      judge(name, l, { from, to }, backMs);
    }

    describe('Redis Cluster: a master killed under load', () => {
      const cluster = new RedisCluster(3);
      beforeAll(async () => {
        await cluster.start();
        await startSharedFleet({ REDIS_CLUSTER_NODES: cluster.nodeList });
      }, 120_000);
      afterAll(async () => {
        await stopFleet();
        await cluster.stop();
      });

      it('no 5xx, no duplicated write, the budget held, shared again within 5 s', async () => {
        const victim = await cluster.masterOf('{macro}');
        await faultUnderLoad('Cluster master killed', async () => {
          await victim.kill();
          // The cluster promotes the victim's replica (node timeout 1 s).
          await cluster.waitHealthy(20_000);
        });
      }, 90_000);
    });

    describe('Redis Sentinel: the master killed under load (1 master, 1 replica, 3 sentinels)', () => {
      const master = new RedisServer();
      let replica: RedisServer;
      const sentinels: RedisServer[] = [];
      beforeAll(async () => {
        await master.start();
        replica = new RedisServer({ args: ['--replicaof', '127.0.0.1', String(master.port)] });
        await replica.start();
        for (let i = 0; i < 3; i++) {
          const conf = join(dir, `sentinel-${i}.conf`);
          writeFileSync(
            conf,
            [
              `sentinel monitor atrium-master 127.0.0.1 ${master.port} 2`,
              'sentinel down-after-milliseconds atrium-master 1000',
              'sentinel failover-timeout atrium-master 5000',
            ].join('\n') + '\n',
          );
          const s = new RedisServer({ config: conf, args: ['--sentinel'] });
          await s.start();
          sentinels.push(s);
        }
        // The sentinels know the replica and each other before the fault.
        await eventually(
          async () =>
            (await redisCli(sentinels[0].port, 'sentinel', 'replicas', 'atrium-master')).includes(
              String(replica.port),
            ) &&
            /num-other-sentinels\n2/.test(
              await redisCli(sentinels[0].port, 'sentinel', 'master', 'atrium-master'),
            ),
          { timeoutMs: 20_000, intervalMs: 200, what: 'the sentinels see the replica and each other' },
        );
        await startSharedFleet({
          REDIS_SENTINELS: sentinels.map((x) => `127.0.0.1:${x.port}`).join(','),
          REDIS_SENTINEL_MASTER: 'atrium-master',
        });
      }, 120_000);
      afterAll(async () => {
        await stopFleet();
        await Promise.all([master, replica, ...sentinels].map((x) => x?.stop()));
      });

      it('no 5xx, no duplicated write, the budget held, shared again within 5 s', async () => {
        await faultUnderLoad('Sentinel master killed', async () => {
          await master.kill();
          await eventually(async () => (await redisCli(replica.port, 'role')).startsWith('master'), {
            timeoutMs: 30_000,
            intervalMs: 100,
            what: 'the sentinels promote the replica',
          });
        });
      }, 90_000);
    });

    describe('Redis gone, then back (one server)', () => {
      const redis = new RedisServer();
      beforeAll(async () => {
        await redis.start();
        await startSharedFleet({ REDIS_URL: redis.url });
      }, 120_000);
      afterAll(async () => {
        await stopFleet();
        await redis.stop();
      });

      it(`gone for ${GAP_MS / 1000} s: no 5xx, no duplicated write, within the budget, shared again within 5 s`, async () => {
        await faultUnderLoad(`Redis gone ${GAP_MS / 1000} s`, async () => {
          await redis.kill();
          // The outage itself: its length is the case (an outage, not a blip), not a wait for anything.
          await new Promise((res) => setTimeout(res, GAP_MS));
          await redis.start();
        });
      }, 120_000);
    });
  },
);
