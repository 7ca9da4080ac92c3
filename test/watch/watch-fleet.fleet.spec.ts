import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testConsumer } from '../helpers/consumers.js';
import { macroReplicaEnv, spawnGateway } from '../helpers/gateway.js';
import { describeRedis } from '../helpers/redis.js';
import {
  INTERVAL_MS,
  RESOURCES,
  TAKEOVER_MS,
  WatchFleet,
  type FleetReplica,
} from '../helpers/watch-fleet.js';

/** Subscribers (SSE streams) over the fleet; WATCH_FLEET_SUBSCRIBERS changes it (the figure is 1,000). */
const SUBSCRIBERS = Number(process.env.WATCH_FLEET_SUBSCRIBERS ?? 1000);

const log = (line: string) => process.stderr.write(`[watch figures] fleet: ${line}\n`);

/**
 * The fleet scenario with real parts (test/helpers/watch-fleet.ts): three `node dist/main.js`
 * replicas sharing Redis, the scripted vendor counting every call, SUBSCRIBERS watch streams over the
 * replicas watching 50 series. What is asserted does not depend on how busy the machine is: one poll per
 * resource and interval for the fleet, every subscriber pushed the change by the poll that saw it, a killed
 * lease holder's polls taken over within 5 s with no survivor missing a change. How fast a change reaches
 * the streams is printed here and measured on a quiet machine by `npm run bench:watch-fleet`.
 */
describeRedis('watch figures on a fleet of three replicas', ({ prefix, url }) => {
  const watcher = testConsumer({ id: 'fleet-watch-figures', upstreams: new Set(['macro']) });
  const dir = mkdtempSync(join(tmpdir(), 'atrium-watch-fleet-'));
  const fleet = new WatchFleet({
    subscribers: SUBSCRIBERS,
    redisUrl: url,
    prefix,
    key: watcher.key,
    async startReplica(vendorUrl, env): Promise<FleetReplica> {
      const gw = await spawnGateway(
        macroReplicaEnv({ dir, consumers: [watcher.consumer], baseUrl: vendorUrl }, env),
        60_000,
      );
      const exited = () =>
        new Promise<void>((res) => {
          if (gw.child.exitCode !== null || gw.child.signalCode !== null) return res();
          gw.child.once('exit', () => res());
        });
      return {
        url: gw.url,
        async kill() {
          gw.child.kill('SIGKILL');
          await exited();
        },
        async stop() {
          await gw.stop();
        },
      };
    },
  });

  beforeAll(() => fleet.start(), 300_000);

  afterAll(async () => {
    await fleet.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('the fleet polls each watched resource once per interval, whatever the subscribers', async () => {
    expect(fleet.subs).toHaveLength(SUBSCRIBERS);
    const f = await fleet.measurePolls();
    log(fleet.describePolls(f));
    // One poll per resource per interval for the whole fleet; one more each for an interval's boundary.
    for (const n of f.perResource) expect(n).toBeLessThanOrEqual(Math.ceil(f.intervals) + 1);
    expect(f.total).toBeLessThanOrEqual(RESOURCES * (Math.ceil(f.intervals) + 1));
    expect(f.perInterval).toBeLessThan(RESOURCES * 1.25);
    // Every resource is polled at all in the window (the fleet does not skip one).
    for (const n of f.perResource) expect(n).toBeGreaterThanOrEqual(2);
    // Each resource held by exactly one replica once the fleet has settled.
    expect(f.settled.reduce((a, b) => a + b, 0)).toBe(RESOURCES);
  }, 120_000);

  it('a change at the vendor is pushed to every subscriber by the poll that saw it', async () => {
    const f = await fleet.change();
    log(fleet.describeChange(f));
    // None missed: every subscriber has the new answer of each resource it watches (change() waited for it).
    expect(f.answers).toBe(SUBSCRIBERS * 2);
    // Each of those answers was a push of a published poll, once each: not a stream's own read, not a repeat.
    expect(f.pushes).toBe(f.answers);
    // Every resource's change was seen by a poll of the fleet (a holder's, published to every replica)...
    expect(f.changedPolls).toBeGreaterThanOrEqual(RESOURCES);
    // ...and the vendor saw only the polls the TTL asks for while the change spread: the streams read no
    // answer of their own, whatever the subscribers and however long the machine took to deliver.
    const allowed = Math.ceil(f.untilAllMs / INTERVAL_MS) + 1;
    for (const n of f.pollsUntilAll) expect(n).toBeLessThanOrEqual(allowed);
    // The change was found on the TTL's schedule, not a slower one: the closest spacing of a resource's
    // polls around it stays below two intervals (the TTL plus the poll's own time and a tick).
    expect(f.gaps[0]).toBeLessThan(2 * INTERVAL_MS);
  }, 60_000);

  it('a replica killed while holding leases: another takes its polls over within 5 s, and the survivors miss no change', async () => {
    const f = await fleet.killHolder();
    log(fleet.describeTakeover(f));
    expect(f.victimHeld).toBeGreaterThan(0);
    // Polls resumed for every resource, within the bound (the lease plus a tick).
    expect(f.resumedMs.filter((t) => t === undefined)).toHaveLength(0);
    expect(f.takeoverMs).toBeLessThanOrEqual(TAKEOVER_MS);
    expect(Math.max(...(f.resumedMs as number[]))).toBeLessThanOrEqual(TAKEOVER_MS);
    // Every subscriber on the surviving replicas has the change made right after the kill.
    expect(f.answers).toBe(f.survivors * 2);
  }, 60_000);
});
