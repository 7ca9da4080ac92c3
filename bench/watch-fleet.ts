// The watch fleet's latency (`npm run bench:watch-fleet`): the scenario of the fleet test
// (test/helpers/watch-fleet.ts: three `node dist/main.js` replicas sharing Redis, the scripted vendor
// counting calls, WATCH_FLEET_SUBSCRIBERS SSE streams over the replicas watching 50 series), measured here
// rather than asserted in a timed test. It reports the vendor's polls per interval, then for
// WATCH_FLEET_CHANGES changes at the vendor how long each took to reach every subscriber against one poll
// interval + 100 ms, then the takeover after a lease holder is killed (SIGKILL). Writes
// <BENCH_OUT>/watch-fleet.json (default bench/results): a run on a machine others kept busy is written to
// dist-bench/unpublished instead, as `npm run bench` does.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import {
  INTERVAL_MS,
  LEASE_MS,
  percentile,
  PUSH_SLACK_MS,
  REPLICAS,
  RESOURCES,
  TAKEOVER_MS,
  WatchFleet,
  type ChangeFigures,
  type FleetReplica,
} from '../test/helpers/watch-fleet.js';
import { ROOT } from './lib/options.js';
import { cpuSeconds, machineBusySeconds, machineInfo } from './lib/procfs.js';
import { backgroundLoad, QUIET_LIMIT_CORES } from './lib/quiet.js';
import { baseEnv, freePort, untilAnswering, waitForExit } from './lib/servers.js';

function num(name: string, def: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return def;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min) throw new Error(`${name} must be a number ≥ ${min}`);
  return v;
}

const SUBSCRIBERS = num('WATCH_FLEET_SUBSCRIBERS', 1000, 1);
const CHANGES = num('WATCH_FLEET_CHANGES', 10, 1);
const REDIS_URL =
  process.env.BENCH_FLEET_REDIS_URL || process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const MAX_OTHER_CORES = num('BENCH_MAX_OTHER_CORES', QUIET_LIMIT_CORES, 0);
const PUBLISHED = join(ROOT, 'bench/results');
const OUT = resolve(process.env.BENCH_OUT ?? PUBLISHED);

const r2 = (v: number) => Math.round(v * 100) / 100;
const spread = (sorted: readonly number[]) => ({
  p50: percentile(sorted, 50),
  p99: percentile(sorted, 99),
  max: sorted[sorted.length - 1],
});

/** CPU seconds used by the bench's own processes: this one and the replicas (a killed one: its last reading). */
function ownCpu(pids: number[], last: Map<number, number>): number {
  let s = process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6;
  for (const pid of pids) {
    try {
      last.set(pid, cpuSeconds(pid));
    } catch {
      // exited: keep what it had used when last read
    }
    s += last.get(pid) ?? 0;
  }
  return s;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-watch-fleet-'));
  const key = `atr_watch_${randomBytes(18).toString('base64url')}`;
  const consumers = join(dir, 'consumers.json');
  writeFileSync(
    consumers,
    JSON.stringify({
      consumers: [
        {
          id: 'watch-fleet-bench',
          keyHashes: [createHash('sha256').update(key).digest('hex')],
          upstreams: ['macro'],
          write: false,
          limits: [],
        },
      ],
    }),
  );
  const linkSecret = randomBytes(24).toString('hex');
  const pids: number[] = [];
  let started = 0;
  const fleet = new WatchFleet({
    subscribers: SUBSCRIBERS,
    redisUrl: REDIS_URL,
    prefix: `bench-watch-fleet-${randomBytes(4).toString('hex')}:`,
    key,
    async startReplica(vendorUrl, env): Promise<FleetReplica> {
      const port = await freePort();
      const logFile = join(dir, `replica-${++started}.log`);
      const fd = openSync(logFile, 'a');
      const child = spawn(process.execPath, ['--max-semi-space-size=4', join(ROOT, 'dist/main.js')], {
        cwd: ROOT,
        env: {
          ...baseEnv(),
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          ATRIUM_SANDBOX: 'off',
          ATRIUM_UPSTREAMS: 'macro',
          ATRIUM_CONSUMERS_FILE: consumers,
          ATRIUM_LINK_SECRET: linkSecret,
          ATRIUM_DRAIN_DELAY_MS: '0',
          UPSTREAM_MACRO_BASE_URL: vendorUrl,
          ...env,
        },
        stdio: ['ignore', fd, fd],
      });
      closeSync(fd);
      pids.push(child.pid!);
      const url = `http://127.0.0.1:${port}`;
      const tail = () => readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
      await untilAnswering(child, `${url}/health/live`, {
        what: `replica ${started}`,
        timeoutMs: 60_000,
        stepMs: 100,
        log: tail,
      });
      return {
        url,
        async kill() {
          child.kill('SIGKILL');
          await waitForExit(child, 15_000);
        },
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          if (!(await waitForExit(child, 15_000))) child.kill('SIGKILL');
        },
      };
    },
  });

  const machine = machineInfo();
  const startedAt = new Date().toISOString();
  console.log(
    `watch fleet bench: ${SUBSCRIBERS} subscribers on ${REPLICAS} replicas, ${RESOURCES} series, TTL ` +
      `${INTERVAL_MS} ms, ${CHANGES} changes; ${machine.cpuCount} × ${machine.cpuModel}, Node ${machine.node}; ` +
      `load average ${machine.loadAverageAtStart.join(' ')}`,
  );
  const last = new Map<number, number>();
  try {
    await fleet.start();
    console.log(`${SUBSCRIBERS} streams open with their first answers in ${fleet.openedMs} ms`);
    // How busy others kept the cores, from here (the streams open) to the end.
    const machine0 = machineBusySeconds();
    const ours0 = ownCpu(pids, last);
    const wall0 = performance.now();

    const polls = await fleet.measurePolls();
    console.log(fleet.describePolls(polls));
    const changes: ChangeFigures[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const c = await fleet.change();
      console.log(`change ${i + 1}: ${fleet.describeChange(c)}`);
      changes.push(c);
    }
    const takeover = await fleet.killHolder();
    console.log(fleet.describeTakeover(takeover));

    const wallS = (performance.now() - wall0) / 1000;
    const otherLoadCores = r2(
      Math.max(0, machineBusySeconds() - machine0 - (ownCpu(pids, last) - ours0)) / wallS,
    );
    const background = backgroundLoad([{ otherLoadCores, wallS }], MAX_OTHER_CORES);

    const delays = changes.flatMap((c) => c.delays).sort((a, b) => a - b);
    const fromPoll = changes.flatMap((c) => c.fromPoll).sort((a, b) => a - b);
    const gaps = changes.flatMap((c) => c.gaps).sort((a, b) => a - b);
    const within = changes.reduce((n, c) => n + c.withinBound, 0);
    // The same bound with the interval as configured (the TTL) instead of as the vendor saw the polls spaced.
    const withinTtl = delays.filter((d) => d <= INTERVAL_MS + PUSH_SLACK_MS).length;
    const pct = (n: number) => `${Math.round((100 * n) / delays.length)} %`;
    const resumed = takeover.resumedMs.filter((t): t is number => t !== undefined);
    const figures = {
      pollsPerInterval: r2(polls.perInterval),
      changeToEverySubscriber: {
        answers: delays.length,
        withinIntervalPlus100Ms: within,
        fraction: r2(within / delays.length),
        withinTtlPlus100Ms: withinTtl,
        ...spread(delays),
        // The bound of each change: the longest spacing of a resource's polls around it, + 100 ms.
        boundMs: spread(changes.map((c) => c.boundMs).sort((a, b) => a - b)),
      },
      pollToStream: spread(fromPoll),
      pollIntervalAtVendor: { min: gaps[0], max: gaps[gaps.length - 1] },
      takeover: {
        victimHeld: takeover.victimHeld,
        takeoverMs: takeover.takeoverMs,
        lastResumedMs: resumed.length ? Math.max(...resumed) : null,
        notResumed: takeover.resumedMs.length - resumed.length,
        withinMs: TAKEOVER_MS,
        survivorsAnswers: takeover.answers,
        changeAfterKill: spread(takeover.delays),
      },
    };
    const lines = [
      '',
      `| figure | measured | target |`,
      `|---|---|---|`,
      `| vendor polls per interval, fleet | ${figures.pollsPerInterval} | ${RESOURCES} |`,
      `| change → every subscriber, within one poll interval (as spaced at the vendor) + ${PUSH_SLACK_MS} ms | ${within} of ${delays.length} (${pct(within)}) | all |`,
      `| change → every subscriber, within the TTL + ${PUSH_SLACK_MS} ms (${INTERVAL_MS + PUSH_SLACK_MS} ms) | ${withinTtl} of ${delays.length} (${pct(withinTtl)}) | |`,
      `| change → every subscriber: p50 / p99 / max | ${figures.changeToEverySubscriber.p50} / ${figures.changeToEverySubscriber.p99} / ${figures.changeToEverySubscriber.max} ms | ≤ interval + ${PUSH_SLACK_MS} ms (${figures.changeToEverySubscriber.boundMs.p50}–${figures.changeToEverySubscriber.boundMs.max} ms) |`,
      `| of which poll → stream: p50 / p99 / max | ${figures.pollToStream.p50} / ${figures.pollToStream.p99} / ${figures.pollToStream.max} ms | ≤ ${PUSH_SLACK_MS} ms |`,
      `| poll interval at the vendor (TTL ${INTERVAL_MS} ms) | ${figures.pollIntervalAtVendor.min}–${figures.pollIntervalAtVendor.max} ms | |`,
      `| takeover after SIGKILL (lease ${LEASE_MS} ms, ${takeover.victimHeld} leases): survivors hold all / last resource polled again | ${takeover.takeoverMs} / ${figures.takeover.lastResumedMs ?? 'never'} ms | ≤ ${TAKEOVER_MS} ms |`,
      `| change made after the kill → every surviving subscriber: p50 / p99 / max | ${figures.takeover.changeAfterKill.p50} / ${figures.takeover.changeAfterKill.p99} / ${figures.takeover.changeAfterKill.max} ms | none missed (${takeover.answers} answers) |`,
      '',
      `other processes kept ${background.meanOtherCores} cores busy (limit ${background.limitCores}): ` +
        (background.quiet ? 'a quiet run' : 'NOT a quiet run') +
        `; load average at the end ${loadavg()
          .map((v) => v.toFixed(2))
          .join(' ')}`,
    ];
    console.log(lines.join('\n'));

    const refused = !background.quiet && OUT === PUBLISHED;
    const outDir = refused ? join(ROOT, 'dist-bench/unpublished') : OUT;
    mkdirSync(outDir, { recursive: true });
    const result = {
      startedAt,
      finishedAt: new Date().toISOString(),
      machine,
      background,
      loadAverageAtEnd: loadavg().map(r2),
      settings: {
        subscribers: SUBSCRIBERS,
        replicas: REPLICAS,
        resources: RESOURCES,
        intervalMs: INTERVAL_MS,
        leaseMs: LEASE_MS,
        changes: CHANGES,
      },
      figures,
      polls: { ...polls },
      changes: changes.map((c) => ({
        answers: c.answers,
        withinBound: c.withinBound,
        boundMs: c.boundMs,
        delays: spread(c.delays),
        pollToStream: spread(c.fromPoll),
        gaps: { min: c.gaps[0], max: c.gaps[c.gaps.length - 1] },
        pushes: c.pushes,
      })),
    };
    const file = join(outDir, 'watch-fleet.json');
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    console.log(`wrote ${relative(ROOT, file)}`);
    if (refused)
      console.log(
        `NOT PUBLISHED: others kept ${background.meanOtherCores} cores busy (> ${background.limitCores}); ` +
          'bench/results keeps the last quiet run. Run again on a quiet machine.',
      );
  } finally {
    await fleet.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
