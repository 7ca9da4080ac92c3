import { randomBytes } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testConsumer } from '../helpers/consumers.js';
import { cleanEnv, spawnGateway, type SpawnedGateway } from '../helpers/gateway.js';
import { describeNeeding } from '../helpers/system-parts.js';
import { met as waitFor } from '../helpers/eventually.js';
import { call, checkEnvelope, type Answer } from '../helpers/gateway-client.js';
import { RedisServer } from '../helpers/redis-server.js';
import { writeSuiteResults, type CaseResult } from '../helpers/results.js';
import { ScriptedUpstream, sendJson, type ScriptContext } from '../helpers/scripted-upstream.js';
import { TcpRelay } from '../helpers/tcp-relay.js';

// Fleet faults: three `node dist/main.js` replicas sharing a private Redis
// (started here on its own port, killed and restarted here; the machine's shared Redis is never touched)
// through a relay that can add 2 s to every Redis round trip, in front of a scripted fake vendor on
// loopback that counts every call. A writer runs through every case: each write carries a unique marker,
// and the fake counts how often each marker arrived. Cases judge: every consumer request answered (200 or
// the documented envelope, within the route deadline + 100 ms; only requests in flight on a replica killed
// under them may fail at the socket), the budget, cooldown and coalescing hold (or degrade the documented
// way), and no write reaches the vendor twice.

const RATE = 20;
const BURST = 10;
const LOCAL_SHARE = 0.25;
const DEADLINE_MS = 5000;
const SLACK_MS = 100;
const TOKEN = 'sbx_test_fleet_faults_macro_4b1e';
/** Each writer's pause between its writes. */
const WRITE_GAP_MS = 80;

/** Documented error answers a consumer may get while a fleet is in trouble (README "Errors"). */
const DOCUMENTED = new Set([
  '429 UPSTREAM_RATE_LIMITED',
  '503 UPSTREAM_UNAVAILABLE',
  '504 UPSTREAM_TIMEOUT',
  '502 UPSTREAM_ERROR',
]);

interface Replica {
  gw: SpawnedGateway;
  /** Set when the test killed it: requests in flight on it may fail at the socket. */
  killed: boolean;
}

describeNeeding(
  'redis-server',
  'hardening: fleet faults (3 replicas, Redis killed, slowed, a replica killed)',
  () => {
    const prefix = `atrium-hardening:${randomBytes(6).toString('hex')}:`;
    const app = testConsumer({ id: 'fleet-app', write: true, upstreams: new Set(['macro']) });
    const auth = { authorization: `Bearer ${app.key}` };
    const redis = new RedisServer();
    const relay = new TcpRelay('127.0.0.1', () => redis.port);
    const vendor = new ScriptedUpstream(() => undefined);
    let dir = '';
    let env: NodeJS.ProcessEnv;
    let fleet: Replica[] = [];
    const results: CaseResult[] = [];
    const tally = { pastDeadline: 0, outsideEnvelope: 0 };
    const started = Date.now();

    // The vendor: writes answer at once; reads after `readDelayMs`, or 429 while `limited` (for `retryAfter`
    // seconds from the first read it refused, as a vendor's own window would).
    let readDelayMs = 20;
    let limited: { retryAfter: number; since?: number } | undefined;
    vendor.script = async (c: ScriptContext) => {
      if (c.recorded.method !== 'GET') {
        sendJson(c.res, 200, { data: { id: `FEED-${vendor.requests.length}` } });
        return;
      }
      if (limited) limited.since ??= c.recorded.at;
      if (limited?.since !== undefined && c.recorded.at < limited.since + limited.retryAfter * 1000) {
        sendJson(
          c.res,
          429,
          { errors: { status: 429, code: 'TOO_MANY_REQUESTS', message: 'slow down' } },
          { 'retry-after': String(limited.retryAfter) },
        );
        return;
      }
      await c.sleep(readDelayMs);
      sendJson(c.res, 200, { data: { healthy: true, ref: c.recorded.path } });
    };

    let n = 1_000_000 + Math.floor(Math.random() * 1_000_000);
    const fresh = () => `/macro/series/${n++}`;
    const live = () => fleet.filter((r) => !r.killed);
    const vendorCalls = (path: string, from = 0, to = Infinity) =>
      vendor.requests.filter(
        (r) =>
          r.method === 'GET' && r.path === `/v2${path.slice('/macro'.length)}` && r.at >= from && r.at <= to,
      ).length;
    const readsBetween = (from: number, to: number) =>
      vendor.requests.filter((r) => r.method === 'GET' && r.at >= from && r.at <= to).length;

    /** What the consumers got in the current case (status and code), for the report. */
    let seenInCase = new Map<string, number>();
    const notes: string[] = [];

    /** Judges one answer; failures go to the case's list. */
    function judge(a: Answer, on: Replica, failures: string[], what: string, wantPath?: string): void {
      const label =
        a.status === 0
          ? 'no answer'
          : a.status < 400
            ? String(a.status)
            : `${a.status} ${checkEnvelope(a).code ?? '?'}`;
      seenInCase.set(label, (seenInCase.get(label) ?? 0) + 1);
      if (a.status === 0) {
        if (!on.killed) failures.push(`${what}: no answer (${a.error})`);
        return;
      }
      if (a.ms > DEADLINE_MS + SLACK_MS + a.stallMs) {
        tally.pastDeadline++;
        failures.push(`${what}: answered after ${Math.round(a.ms)} ms`);
      }
      if (a.status >= 200 && a.status < 300) {
        if (a.error) failures.push(`${what}: broken body (${a.error})`);
        else if (wantPath && !a.text.includes(wantPath.slice('/macro'.length)))
          failures.push(`${what}: 200 with a foreign body ${a.text.slice(0, 80)}`);
        return;
      }
      const env = checkEnvelope(a);
      if (!env.ok) {
        tally.outsideEnvelope++;
        failures.push(`${what}: ${env.problem}`);
      } else if (!DOCUMENTED.has(`${a.status} ${env.code}`))
        failures.push(`${what}: ${a.status} ${env.code}`);
    }

    async function read(r: Replica, path: string, failures: string[], what = `GET ${path}`): Promise<Answer> {
      const a = await call(r.gw.url + path, { headers: auth, timeoutMs: 20_000 });
      judge(a, r, failures, what, path);
      return a;
    }

    // ------------------------------------------------------------------------------------------------
    // Writes during everything

    const writes = { sent: 0, answered: 0, lostWithReplica: 0, failures: [] as string[] };
    let writing = false;
    const writers: Promise<void>[] = [];
    let marker = 0;
    async function writer(id: number): Promise<void> {
      while (writing) {
        const targets = live();
        const r = targets[(marker + id) % targets.length];
        const m = `w${id}-${marker++}`;
        writes.sent++;
        const a = await call(r.gw.url + '/macro/feeds', {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
          body: `filter_id=F1&name=${m}`,
          timeoutMs: 20_000,
        });
        if (a.status === 0 && r.killed) writes.lostWithReplica++;
        else {
          writes.answered++;
          judge(a, r, writes.failures, `POST ${m}`);
        }
        // A steady trickle of writes (a pace, not a wait for anything).
        await new Promise((r) => setTimeout(r, WRITE_GAP_MS));
      }
    }
    function duplicatedWrites(): string[] {
      const seen = new Map<string, number>();
      for (const r of vendor.requests) {
        if (r.method !== 'POST') continue;
        const m = /name=(w\d+-\d+)/.exec(r.body.toString())?.[1];
        if (m) seen.set(m, (seen.get(m) ?? 0) + 1);
      }
      return [...seen].filter(([, c]) => c > 1).map(([m, c]) => `${m} × ${c}`);
    }

    // ------------------------------------------------------------------------------------------------

    async function spawnReplica(): Promise<Replica> {
      return { gw: await spawnGateway(env, 60_000), killed: false };
    }

    async function readyState(
      r: Replica,
    ): Promise<{ redis: boolean; cache?: boolean; budget?: string; tokens?: number }> {
      const a = await call(r.gw.url + '/health/ready', { timeoutMs: 5000 });
      try {
        const doc = JSON.parse(a.text) as {
          checks: { redis?: { ok?: boolean } };
          upstreams: Array<{ name: string; budget?: string; bucket?: { tokens?: number } }>;
        };
        const macro = doc.upstreams.find((u) => u.name === 'macro');
        return {
          redis: doc.checks.redis?.ok === true,
          // The cache's own view of Redis (it probes on its own after an outage).
          cache: !/"available":false/.test(a.text),
          budget: macro?.budget,
          tokens: macro?.bucket?.tokens,
        };
      } catch {
        return { redis: false };
      }
    }

    /** Every live replica reports Redis up, the shared budget and its cache on Redis again. */
    async function fleetShared(timeoutMs: number): Promise<boolean> {
      return waitFor(
        async () =>
          (await Promise.all(live().map(readyState))).every(
            (s) => s.redis && s.cache && s.budget === 'shared',
          ),
        timeoutMs,
        200,
      );
    }

    /** Every live replica reports Redis lost (or slower than its check allows). */
    async function fleetWithoutRedis(timeoutMs: number): Promise<boolean> {
      return waitFor(
        async () => (await Promise.all(live().map(readyState))).every((s) => !s.redis),
        timeoutMs,
        200,
      );
    }

    /** A burst of identical GETs over every live replica; returns the vendor calls it caused. */
    async function burst(count: number, failures: string[], label: string): Promise<number> {
      const path = fresh();
      const targets = live();
      await Promise.all(
        Array.from({ length: count }, (_, i) =>
          read(targets[i % targets.length], path, failures, `${label} #${i}`),
        ),
      );
      return vendorCalls(path);
    }

    /** Readers on fresh paths (misses: budget) and on one hot path (hits), over the live replicas, until stopped. */
    function load(failures: string[], clients = 6): { stop: () => Promise<number>; answered: () => number } {
      let running = true;
      let answered = 0;
      const hot = fresh();
      const loops = Array.from({ length: clients }, async (_, i) => {
        while (running) {
          const targets = live();
          const r = targets[i % targets.length];
          await read(r, i % 3 === 2 ? hot : fresh(), failures, `load #${i}`);
          answered++;
        }
      });
      return {
        stop: async () => {
          running = false;
          await Promise.all(loops);
          return answered;
        },
        answered: () => answered,
      };
    }

    async function runCase(name: string, body: (failures: string[]) => Promise<void>): Promise<CaseResult> {
      const failures: string[] = [];
      seenInCase = new Map();
      try {
        await body(failures);
      } catch (e) {
        failures.push(`case crashed: ${(e as Error).stack ?? String(e)}`);
      }
      notes.push(`${name}: ${[...seenInCase].map(([k, v]) => `${k} ×${v}`).join(', ')}`);
      const r = { name, survived: failures.length === 0, failures: failures.slice(0, 20) };
      results.push(r);
      return r;
    }

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'atrium-hardening-fleet-'));
      await redis.start();
      await relay.start();
      await vendor.start();
      const consumers = join(dir, 'consumers.json');
      writeFileSync(
        consumers,
        JSON.stringify({
          consumers: [
            {
              id: app.consumer.id,
              keyHashes: app.consumer.keyHashes.map((h) => h.toString('hex')),
              upstreams: ['macro'],
              write: true,
              limits: [],
            },
          ],
        }),
      );
      env = cleanEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        ATRIUM_SANDBOX: 'off',
        ATRIUM_CONSUMERS_FILE: consumers,
        REDIS_URL: relay.url,
        ATRIUM_REDIS_PREFIX: prefix,
        ATRIUM_CACHE_COALESCE_LEASE_MS: '1000',
        UPSTREAM_MACRO_BASE_URL: `${vendor.origin}/v2`,
        UPSTREAM_MACRO_TOKEN: TOKEN,
        UPSTREAM_MACRO_RATE_PER_SEC: String(RATE),
        UPSTREAM_MACRO_BURST: String(BURST),
        UPSTREAM_MACRO_LOCAL_SHARE: String(LOCAL_SHARE),
        UPSTREAM_MACRO_AIMD: 'off',
        UPSTREAM_MACRO_MAX_WAIT_MS: '1000',
        UPSTREAM_MACRO_TIMEOUT_MS: String(DEADLINE_MS),
        UPSTREAM_MACRO_COOLDOWN_MAX_SECONDS: '10',
        ...Object.fromEntries(
          ['COMPANY', 'DOCUMENTS', 'DEALS'].flatMap((u) => [
            [`UPSTREAM_${u}_BASE_URL`, 'http://127.0.0.1:9'],
            [`UPSTREAM_${u}_TOKEN`, 'unused-hardening-token'],
          ]),
        ),
      });
      fleet = await Promise.all([0, 1, 2].map(() => spawnReplica()));
      if (!(await fleetShared(20_000))) throw new Error('the fleet never reported a shared budget');
      writing = true;
      writers.push(writer(0), writer(1));
    }, 120_000);

    afterAll(async () => {
      writing = false;
      await Promise.all(writers);
      const dup = duplicatedWrites();
      await Promise.all(fleet.filter((r) => !r.killed).map((r) => r.gw.stop()));
      await relay.cut();
      await redis.stop();
      await vendor.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
      writeSuiteResults({
        suite: 'fleet',
        finishedAt: new Date().toISOString(),
        durationMs: Date.now() - started,
        counters: {
          fleetCasesSurvived: results.filter((r) => r.survived).length,
          fleetCasesTotal: results.length,
          duplicatedVendorWrites: dup.length,
          answersPastDeadline: tally.pastDeadline,
          errorsOutsideEnvelope: tally.outsideEnvelope,
        },
        cases: results,
        notes: [
          ...notes,
          `writes: ${writes.sent} sent, ${writes.answered} answered, ${writes.lostWithReplica} in flight on a killed replica, ${dup.length} duplicated at the vendor`,
        ],
      });
    }, 60_000);

    it('coalescing: 30 identical GETs over 3 replicas make 1 vendor call', async () => {
      readDelayMs = 300;
      const r = await runCase('coalesced burst over 3 replicas', async (failures) => {
        const calls = await burst(30, failures, 'burst');
        if (calls !== 1) failures.push(`${calls} vendor calls for 30 identical GETs`);
      });
      readDelayMs = 20;
      expect(r.failures).toEqual([]);
    }, 90_000);

    it('budget: hammered for 3 s, the vendor gets at most R×3 + burst calls', async () => {
      // The bucket refills to its burst first.
      await waitFor(
        async () => (await Promise.all(live().map(readyState))).every((s) => (s.tokens ?? 0) >= BURST - 1),
        10_000,
        100,
      );
      const r = await runCase('shared budget under load', async (failures) => {
        const t0 = Date.now();
        const l = load(failures, 12);
        // Hammered until the vendor saw about 3 s of budget (10 s at the most: a starved fleet is judged below).
        await waitFor(() => readsBetween(t0, Date.now()) >= RATE * 3 + BURST, 10_000);
        const t1 = Date.now();
        await l.stop();
        const calls = readsBetween(t0, t1);
        const bound = RATE * ((t1 - t0) / 1000) + BURST + 1;
        if (calls > bound)
          failures.push(`${calls} vendor calls in ${t1 - t0} ms (budget ${bound.toFixed(0)})`);
        if (calls < RATE)
          failures.push(`only ${calls} vendor calls in ${t1 - t0} ms: the budget starved the fleet`);
      });
      expect(r.failures).toEqual([]);
    }, 90_000);

    it('cooldown: after a vendor 429 (Retry-After 2) no replica calls the vendor until it ends', async () => {
      const r = await runCase('fleet-wide cooldown after a vendor 429', async (failures) => {
        limited = { retryAfter: 2 };
        const before = vendor.requests.length;
        const l = load(failures, 6);
        const seen = await waitFor(() => vendor.requests.slice(before).some((q) => q.method === 'GET'), 5000);
        const first = vendor.requests.slice(before).find((q) => q.method === 'GET');
        if (!seen || !first) {
          await l.stop();
          failures.push('the vendor was never called');
          return;
        }
        const t429 = first.at;
        // The vendor refuses for 2 s by its own clock; the load runs until a call lands after that.
        await waitFor(() => readsBetween(t429 + 2000, Infinity) > 0, 6000);
        limited = undefined;
        await l.stop();
        // Calls granted before the 429 was known may still land just after it (a short grace).
        const during = readsBetween(t429 + 250, t429 + 1900);
        if (during > 0) failures.push(`${during} vendor calls during the 2 s cooldown`);
        if (readsBetween(t429 + 2000, Date.now()) === 0)
          failures.push('no vendor call after the cooldown ended');
      });
      expect(r.failures).toEqual([]);
    }, 90_000);

    it('a replica SIGKILLed in the middle of a coalesced burst: the others answer, one more vendor call at most', async () => {
      const r = await runCase('replica SIGKILL mid coalesced burst', async (failures) => {
        readDelayMs = 1500;
        const path = fresh();
        const [victim, ...others] = live();
        const leader = read(victim, path, failures, 'leader on the victim');
        await waitFor(() => vendorCalls(path) === 1, 3000);
        // The followers are all on the wire (their request headers sent) before the leader dies.
        let sent = 0;
        const onSent = (m: unknown) => {
          if ((m as { request: { path: string } }).request.path === path) sent++;
        };
        subscribe('undici:client:sendHeaders', onSent);
        const followers = Array.from({ length: 20 }, (_, i) =>
          read(others[i % others.length], path, failures, `follower #${i}`),
        );
        await waitFor(() => sent >= followers.length, 5000);
        unsubscribe('undici:client:sendHeaders', onSent);
        victim.killed = true;
        victim.gw.child.kill('SIGKILL');
        const answers = await Promise.all(followers);
        await leader;
        readDelayMs = 20;
        const ok = answers.filter((a) => a.status === 200).length;
        if (ok === 0) failures.push('no follower got the answer after the leader died');
        const calls = vendorCalls(path);
        if (calls > 2) failures.push(`${calls} vendor calls for one coalesced key (leader killed)`);
        fleet = [...live(), await spawnReplica()];
        if (!(await fleetShared(20_000)))
          failures.push('the replacement replica never joined the shared budget');
      });
      readDelayMs = 20;
      expect(r.failures).toEqual([]);
    }, 90_000);

    it('Redis SIGKILLed under load and restarted: all answered, local budget share, coalescing per process, then shared again', async () => {
      const r = await runCase('Redis killed under load and restarted', async (failures) => {
        const tLoad = Date.now();
        const l = load(failures, 6);
        // About a second of budget spent in shared mode, then Redis goes, and every replica notices.
        await waitFor(() => readsBetween(tLoad, Date.now()) >= RATE, 10_000);
        const tKill = Date.now();
        await redis.kill();
        await fleetWithoutRedis(10_000);
        // With Redis gone each replica coalesces on its own: at most one call per replica.
        const calls = await burst(15, failures, 'burst without Redis');
        if (calls > 3)
          failures.push(
            `${calls} vendor calls for 15 identical GETs without Redis (more than one per replica)`,
          );
        // Redis stays away while the fleet spends about 2 s of budget on its local shares.
        await waitFor(() => readsBetween(tKill, Date.now()) >= RATE * 2, 10_000);
        await redis.start();
        const back = await fleetShared(15_000);
        const tBack = Date.now();
        await l.stop();
        if (!back) failures.push('the fleet did not return to the shared budget within 15 s of the restart');
        const seconds = (tBack - tKill) / 1000;
        // Down: each replica spends its share, the budget ÷ the 3 replicas its heartbeat saw (its fallback
        // bucket's burst is LOCAL_SHARE of the burst); the restart empties Redis, so a fresh shared bucket
        // may grant its burst once more.
        const bound = 3 * ((RATE / 3) * seconds + Math.round(BURST * LOCAL_SHARE)) + 2 * BURST + 1;
        const made = readsBetween(tKill, tBack);
        if (made > bound)
          failures.push(
            `${made} vendor calls in the ${seconds.toFixed(1)} s outage (bound ${bound.toFixed(0)})`,
          );
        const after = await burst(20, failures, 'burst after the restart');
        if (after !== 1) failures.push(`${after} vendor calls for 20 identical GETs after Redis came back`);
      });
      expect(r.failures).toEqual([]);
    }, 90_000);

    it('a slow Redis (every round trip + 2 s): all answered in time, coalescing per process', async () => {
      const r = await runCase('slow Redis (+2 s per round trip)', async (failures) => {
        relay.delayMs = 2000;
        const l = load(failures, 6);
        // As many answers as readers have come back through the slow Redis.
        await waitFor(() => l.answered() >= 6, 10_000);
        const calls = await burst(15, failures, 'burst with a slow Redis');
        if (calls > 3) failures.push(`${calls} vendor calls for 15 identical GETs with a slow Redis`);
        const t0 = Date.now();
        // About 2 s of budget (5 s at the most).
        await waitFor(() => readsBetween(t0, Date.now()) >= RATE * 2, 5000);
        const t1 = Date.now();
        const made = readsBetween(t0, t1);
        const bound = RATE * ((t1 - t0) / 1000) + BURST + 1;
        if (made > bound)
          failures.push(
            `${made} vendor calls in ${t1 - t0} ms with a slow Redis (bound ${bound.toFixed(0)})`,
          );
        relay.delayMs = 0;
        await l.stop();
        if (!(await fleetShared(15_000)))
          failures.push('the fleet did not return to the shared budget after Redis sped up');
      });
      relay.delayMs = 0;
      expect(r.failures).toEqual([]);
    }, 90_000);

    it('writes during all of these: every write answered, none reached the vendor twice', async () => {
      writing = false;
      await Promise.all(writers);
      writers.length = 0;
      const r = await runCase('writes during every fault', async (failures) => {
        failures.push(...writes.failures.slice(0, 10));
        const dup = duplicatedWrites();
        if (dup.length > 0) failures.push(`writes duplicated at the vendor: ${dup.slice(0, 5).join(', ')}`);
        if (writes.answered < 20) failures.push(`only ${writes.answered} writes answered`);
      });
      expect(r.failures).toEqual([]);
    }, 90_000);
  },
);
