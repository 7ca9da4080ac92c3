// `npm run bench`: every server in its own process on 127.0.0.1, checked (status, md5 of the body), warmed
// up, then every scenario measured round-robin for several rounds; medians and ratios to the ceiling of the
// same round are printed and written to bench/results (latest.json, chart.svg, summary.md) and docs/performance.md.
import { execFileSync } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { renderChart } from './lib/chart.js';
import {
  checkScenario,
  measureBurst,
  measureLoad,
  type BurstMetrics,
  type CheckResult,
  type Harness,
  type RunMetrics,
} from './lib/measure.js';
import { readOptions, ROOT, type BenchOptions } from './lib/options.js';
import { backgroundLoad, hostSteadiness, steadinessLine } from './lib/quiet.js';
import { BODY_SIZES, md5, payload } from './lib/payloads.js';
import { machineInfo } from './lib/procfs.js';
import {
  BURST_HEADER,
  burstRows,
  evaluateTargets,
  reportedFigures,
  SCENARIO_HEADER,
  scenarioRows,
  summarise,
  summariseBursts,
  textTable,
} from './lib/report.js';
import { selectScenarios } from './lib/scenarios.js';
import {
  baseEnv,
  SERVER_LABELS,
  startServer,
  type RunningServer,
  type ServerId,
  type ServerSpec,
} from './lib/servers.js';
import {
  HEADLINE_END,
  HEADLINE_START,
  headlineMarkdown,
  PERFORMANCE_DOC,
  summaryMarkdown,
  updateBlock,
  updateResultsBlock,
} from './lib/summary.js';
import { PERF_NODE_ARGS, perfAvailable, perfWorkDir, recordPerf, summarisePerf } from './lib/perf-record.js';
import {
  fleetRows,
  fleetTargets,
  FLEET_HEADER,
  hitBesideNginx,
  hitBesideNginxLine,
} from './lib/fleet-report.js';
import { runFleetScenario, type FleetRun } from './lib/fleet-run.js';
import { findNginx, startNginx } from './lib/nginx.js';
import { perSecondAndMinute } from '../src/core/auth/consumer.js';
import { UPSTREAM_NAMES } from '../src/upstreams/index.js';

const DIST_BENCH = join(ROOT, 'dist-bench/bench');

function log(line: string): void {
  process.stdout.write(line + '\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Counts per whole second of ascending millisecond times. */
function perSecond(times: readonly number[]): number[] {
  const out: number[] = [];
  for (const t of times) {
    const i = Math.floor(t / 1000);
    while (out.length <= i) out.push(0);
    out[i]++;
  }
  return out;
}

function git(args: string[], cwd = ROOT): string {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/**
 * Consumers with limits the bench never reaches, so the inbound throttle runs but never rejects: `bench`
 * (the single-process scenarios) and the fleet scenario's many consumers.
 */
function writeConsumers(dir: string, count: number): { file: string; keys: string[] } {
  const keys = Array.from({ length: count }, () => `atr_bench_${randomBytes(18).toString('base64url')}`);
  const file = join(dir, 'consumers.json');
  const doc = {
    consumers: keys.map((key, i) => ({
      id: i === 0 ? 'bench' : `fleet-consumer-${i}`,
      keyHashes: [createHash('sha256').update(key).digest('hex')],
      upstreams: [...UPSTREAM_NAMES],
      write: false,
      limits: perSecondAndMinute(1_000_000, 100_000_000),
      weight: 1,
    })),
  };
  writeFileSync(file, JSON.stringify(doc, null, 2));
  return { file, keys };
}

function atriumEnv(
  lane: string,
  upstream: RunningServer,
  consumersFile: string,
  opts: BenchOptions,
  fleet?: { redisUrl: string; redisPrefix: string; ttlS: number },
) {
  const env: NodeJS.ProcessEnv = {
    ...baseEnv(),
    NODE_ENV: 'production',
    ATRIUM_SANDBOX: 'off',
    ATRIUM_CONSUMERS_FILE: consumersFile,
    LOG_LEVEL: 'info',
    ATRIUM_SHUTDOWN_GRACE_MS: '3000',
    // The view scenario's view (four parts on the macro lane).
    ATRIUM_VIEWS_FILE: join(ROOT, 'bench/views.bench.yaml'),
  };
  for (const name of UPSTREAM_NAMES) {
    const p = `UPSTREAM_${name.toUpperCase()}_`;
    // Each Atrium process has its own lane on the fake, so its upstream calls are counted apart.
    env[p + 'BASE_URL'] = `${upstream.url}/${name === 'macro' ? lane : `${lane}-${name}`}/v2`;
    env[p + 'TOKEN'] = `bench-${name}-upstream-token`;
    // The shared upstream budget must not be what the bench measures.
    env[p + 'RATE_PER_SEC'] = '100000';
    env[p + 'BURST'] = '100000';
    env[p + 'CONNECTIONS'] = '64';
  }
  const redisUrl = fleet?.redisUrl ?? opts.redisUrl;
  if (redisUrl) {
    env.REDIS_URL = redisUrl;
    env.ATRIUM_REDIS_PREFIX = fleet?.redisPrefix ?? `bench:${randomBytes(4).toString('hex')}:${lane}:`;
    // Replicas sharing Redis must sign links with one secret (the boot stops without it).
    env.ATRIUM_LINK_SECRET = 'bench-fleet-link-secret-0123456789abcdef';
  }
  // The fleet: series answers kept for the same TTL as nginx's proxy_cache_valid.
  if (fleet) env.ATRIUM_CACHE_TTL_OVERRIDES = `series=${fleet.ttlS}s`;
  return { ...env, ...opts.atriumEnv };
}

function serverSpec(
  id: ServerId,
  upstream: RunningServer | undefined,
  consumersFile: string,
  opts: BenchOptions,
): ServerSpec {
  const nodeArgs = opts.cpuProf.includes(id)
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${join(opts.outDir, 'profiles')}`,
        `--cpu-prof-name=${id}-${Date.now()}.cpuprofile`,
      ]
    : [];
  const upstreamFor = (lane: string) => ({
    UPSTREAM_BASE_URL: `${upstream!.url}/${lane}/v2`,
    UPSTREAM_TOKEN: 'bench-naive-upstream-token',
  });
  switch (id) {
    case 'upstream':
      return {
        id,
        script: join(DIST_BENCH, 'servers/upstream.js'),
        env: { ...baseEnv(), FAKE_429_LANES: 'atrium-storm', FAKE_RETRY_AFTER_S: '3600' },
        readyPath: '/__health',
        nodeArgs,
      };
    case 'ceiling':
      return { id, script: join(DIST_BENCH, 'servers/ceiling.js'), env: baseEnv(), readyPath: '/', nodeArgs };
    case 'bare':
      return {
        id,
        script: join(DIST_BENCH, 'servers/bare-proxy.js'),
        env: { ...baseEnv(), UPSTREAM_BASE_URL: `${upstream!.url}/bare/v2` },
        readyPath: '/__ready',
        nodeArgs,
      };
    case 'naive-hit':
    case 'naive-miss':
      return {
        id,
        script: join(DIST_BENCH, 'servers/naive-proxy/main.js'),
        env: { ...baseEnv(), NODE_ENV: 'production', ...upstreamFor(id) },
        readyPath: '/__ready',
        nodeArgs,
      };
    case 'fleet-vendor':
      return {
        id,
        script: join(DIST_BENCH, 'servers/vendor.js'),
        env: { ...baseEnv(), FAKE_DELAY_MS: String(opts.fleet.vendorDelayMs) },
        readyPath: '/__stats',
        nodeArgs,
      };
    case 'nginx-hit':
    case 'fleet-atrium-1':
    case 'fleet-atrium-2':
    case 'fleet-atrium-3':
    case 'fleet-nginx-1':
    case 'fleet-nginx-2':
    case 'fleet-nginx-3':
      throw new Error(`${id} is started by its own helper`);
    case 'atrium-hit':
    case 'atrium-hit-plain':
    case 'atrium-view':
    case 'atrium-miss':
    case 'atrium-storm':
      return {
        id,
        script: opts.atriumMain,
        env: {
          ...atriumEnv(id, upstream!, consumersFile, opts),
          ...(id === 'atrium-hit-plain' ? { ATRIUM_USAGE: 'off' } : {}),
          // The fake's Retry-After (FAKE_RETRY_AFTER_S, an hour) is honoured whole: the cooldown outlasts the
          // run. Capped at the default 10 minutes, a five-round run saw it end and the vendor called again.
          ...(id === 'atrium-storm' ? { UPSTREAM_MACRO_COOLDOWN_MAX_SECONDS: '3600' } : {}),
        },
        readyPath: '/health/live',
        nodeArgs: ['--max-semi-space-size=4', ...opts.atriumNodeArgs, ...nodeArgs],
      };
  }
}

async function main(): Promise<number> {
  const opts = readOptions();
  const selected = selectScenarios(opts.only);
  const { bursts, fleet } = selected;
  const nginx = findNginx();
  // nginx is optional: without it the peer is skipped, loudly, and Atrium is still measured.
  const nginxScenarios = selected.load.filter((s) => s.server.startsWith('nginx'));
  if (!nginx.bin && (nginxScenarios.length > 0 || fleet))
    log(
      `!!! NGINX PEER SKIPPED: ${nginx.why}. nginx proxy_cache is not measured (hit, fleet); Atrium is. !!!`,
    );
  const load = nginx.bin ? selected.load : selected.load.filter((s) => !nginxScenarios.includes(s));
  if (load.length === 0 && bursts.length === 0 && !fleet)
    throw new Error('BENCH_SCENARIOS matches no scenario');
  const needed = new Set<ServerId>([
    'upstream',
    ...load.map((s) => s.server),
    ...bursts.map((b) => b.server),
  ]);
  if ((fleet || [...needed].some((id) => id.startsWith('atrium'))) && !existsSync(opts.atriumMain))
    throw new Error(`${opts.atriumMain} is missing: run \`npm run build\` first (npm run bench does)`);

  const machine = machineInfo();
  const startedAt = new Date().toISOString();
  // The commit of the Atrium build measured (BENCH_ATRIUM_MAIN may point at another checkout).
  const atriumRepo = git(['rev-parse', '--show-toplevel'], dirname(opts.atriumMain)) || ROOT;
  const commit =
    git(['rev-parse', '--short', 'HEAD'], atriumRepo) +
    (git(['status', '--porcelain', '--', 'src'], atriumRepo) ? '+dirty' : '');
  log(`Atrium bench: ${machine.cpuModel}, ${machine.cpuCount} vCPUs, Node ${machine.node}, commit ${commit}`);
  log(
    `${load.length} load scenarios, ${bursts.length} bursts; ${opts.rounds} rounds × ${opts.durationS} s, ` +
      `warm-up ${opts.warmupS} s, ${opts.connections} connections`,
  );
  for (const size of BODY_SIZES)
    log(`payload ${size}: ${payload(size).length} bytes, md5 ${md5(payload(size))}`);

  const tmp = mkdtempSync(join(tmpdir(), 'atrium-bench-'));
  const consumers = writeConsumers(tmp, 1 + (fleet ? opts.fleet.consumers : 0));
  mkdirSync(opts.outDir, { recursive: true });
  const servers = new Map<ServerId, RunningServer>();
  const stopAll = async () => {
    // Reverse order: the fake upstream last, so draining gateways can still reach it.
    for (const s of [...servers.values()].reverse()) await s.stop();
  };
  const onSignal = () => {
    void stopAll().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const runs = new Map<string, RunMetrics[]>();
  const burstRuns = new Map<string, BurstMetrics[]>();
  const checks = new Map<string, CheckResult>();
  const problems: string[] = [];
  const tag = Date.now().toString(36);
  const perfOk = opts.perf.length > 0 && perfAvailable();
  if (opts.perf.length > 0 && !perfOk)
    log('BENCH_PERF: perf is not available here; no perf profile is taken');
  const perfDir = join(opts.outDir, 'perf');
  const profiledByPerf = (server: string): boolean => perfOk && opts.perf.includes(server);
  const perfReports: string[] = [];
  try {
    // Start-up is sequential: Nest boots are CPU-heavy and the machine has two cores.
    const upstream = await startServer(serverSpec('upstream', undefined, consumers.file, opts), tmp);
    servers.set('upstream', upstream);
    for (const id of needed) {
      if (id === 'upstream') continue;
      if (id === 'nginx-hit') {
        const s = await startNginx({
          id,
          bin: nginx.bin!,
          upstreamUrl: `${upstream.url}/${id}/v2`,
          prefix: '/macro/',
          ttlS: 3600,
          dir: join(tmp, id),
        });
        servers.set(id, s);
        log(`started ${id} (nginx, pid ${s.pid}) on ${s.url}`);
        continue;
      }
      const spec = serverSpec(id, upstream, consumers.file, opts);
      // A server profiled with perf writes its JIT dump where it runs.
      const s = await startServer(
        profiledByPerf(id)
          ? { ...spec, nodeArgs: [...(spec.nodeArgs ?? []), ...PERF_NODE_ARGS], cwd: perfWorkDir(perfDir) }
          : spec,
        tmp,
      );
      servers.set(id, s);
      log(`started ${id} (pid ${s.pid}) on ${s.url}`);
    }
    const h: Harness = {
      servers,
      upstream,
      headers: { authorization: `Bearer ${consumers.keys[0]}`, accept: 'application/json' },
      connections: opts.connections,
    };

    for (const s of load) {
      const c = await checkScenario(h, s, `${tag}c`);
      checks.set(s.id, c);
      const what = c.md5Match === null ? '' : c.md5Match ? ', body md5 matches' : ', BODY DIFFERS';
      const xc = c.xCache.some((v) => v !== null) ? `, X-Cache ${c.xCache.join(' → ')}` : '';
      log(`check ${s.id}: ${c.status}${what}${xc}${c.ok ? '' : '  <-- FAILED'}`);
    }

    if (opts.warmupS > 0) {
      log(`warm-up: ${opts.warmupS} s per scenario`);
      for (const s of load) {
        const w = await measureLoad(h, s, opts.warmupS, 0, `${tag}w`);
        if (w.errors || w.timeouts || w.unexpected)
          log(
            `  warm-up ${s.id}: ${w.errors} errors, ${w.timeouts} timeouts, ${w.unexpected} unexpected statuses`,
          );
        await sleep(opts.pauseMs);
      }
    }

    for (let round = 1; round <= opts.rounds; round++) {
      for (const s of load) {
        const rec = profiledByPerf(s.server)
          ? recordPerf(servers.get(s.server)!.pid, perfDir, `${s.id}-r${round}-${tag}`)
          : undefined;
        const r = await measureLoad(h, s, opts.durationS, round, `${tag}r${round}`);
        if (rec) perfReports.push(summarisePerf(await rec.stop(), r.cpuUsPerReq));
        runs.set(s.id, [...(runs.get(s.id) ?? []), r]);
        log(
          `[round ${round}/${opts.rounds}] ${s.id.padEnd(22)} ${r.reqPerSec.toFixed(0).padStart(7)} req/s  ` +
            `p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  CPU ${r.cpuUsPerReq.toFixed(1)} µs/req  ` +
            `RSS ${r.peakRssMB} MB  upstream ${r.upstreamCallsPerReq}/req  others ${r.otherLoadCores} cores` +
            (r.errors || r.unexpected ? `  errors ${r.errors}, unexpected ${r.unexpected}` : ''),
        );
        await sleep(opts.pauseMs);
      }
      for (const b of bursts) {
        const r = await measureBurst(h, b, opts.burstClients, round, `${tag}r${round}`);
        burstRuns.set(b.id, [...(burstRuns.get(b.id) ?? []), r]);
        log(
          `[round ${round}/${opts.rounds}] ${b.id.padEnd(22)} ${r.clients} clients → ${r.upstreamCalls} upstream calls, ` +
            `${JSON.stringify(r.statusCounts)}, ${r.wallMs} ms`,
        );
        await sleep(opts.pauseMs);
      }
    }
  } finally {
    await stopAll();
  }

  // The fleet scenario, once the single-process servers are gone (its own processes, its own vendor).
  let fleetRun: FleetRun | undefined;
  try {
    if (fleet)
      fleetRun = await runFleetScenario({
        opts: opts.fleet,
        tmp,
        vendorSpec: serverSpec('fleet-vendor', undefined, consumers.file, opts),
        atriumSpec: (id, vendor, redisPrefix) => ({
          ...serverSpec('atrium-miss', vendor, consumers.file, opts),
          id,
          env: atriumEnv('fleet-atrium', vendor, consumers.file, opts, {
            redisUrl: opts.fleet.redisUrl,
            redisPrefix,
            ttlS: opts.fleet.ttlS,
          }),
        }),
        keys: consumers.keys.slice(1),
        nginxBin: nginx.bin,
        log,
        track: (s) => servers.set(s.id, s),
      });
  } catch (e) {
    problems.push(`fleet: ${e instanceof Error ? e.message : String(e)}`);
    log(`fleet scenario failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  const scenarios = summarise(load, runs, checks);
  const burstSummaries = summariseBursts(bursts, burstRuns);
  for (const s of scenarios) problems.push(...s.problems.map((p) => `${s.id}: ${p}`));
  for (const b of burstSummaries) problems.push(...b.problems.map((p) => `${b.id}: ${p}`));
  const targets = [
    ...evaluateTargets(scenarios, burstSummaries),
    ...(fleet ? fleetTargets(fleetRun?.results ?? []) : []),
  ];
  const figures = reportedFigures(scenarios);
  const hitVsNginx = hitBesideNginx(scenarios);

  log('');
  log(textTable(SCENARIO_HEADER, scenarioRows(scenarios)));
  if (burstSummaries.length) log('\n' + textTable(BURST_HEADER, burstRows(burstSummaries)));
  if (fleetRun?.results.length) log('\n' + textTable(FLEET_HEADER, fleetRows(fleetRun.results)));
  if (hitVsNginx) log('\n' + hitBesideNginxLine(hitVsNginx));
  log('');
  for (const t of targets)
    log(
      `${t.met === null ? 'n/a    ' : t.met ? 'met    ' : 'NOT MET'}  ${t.target}: ${t.measured}${t.note ? ` (${t.note})` : ''}`,
    );
  for (const f of figures) log(`figure   ${f.figure}: ${f.measured}${f.note ? ` (${f.note})` : ''}`);
  const findings = burstSummaries.flatMap((b) => b.findings.map((f) => `${b.id}: ${f}`));
  if (findings.length)
    log('\nFindings (baseline failures, reported):\n' + findings.map((f) => `  - ${f}`).join('\n'));
  if (problems.length) log('\nPROBLEMS:\n' + problems.map((p) => `  - ${p}`).join('\n'));

  const background = backgroundLoad(
    [
      ...[...runs.values()].flat(),
      ...(fleetRun?.results ?? []).map((r) => ({
        otherLoadCores: r.otherLoadCores,
        wallS: opts.fleet.durationS + opts.fleet.cooldownS,
      })),
    ],
    opts.maxOtherCores,
  );
  log(
    `\nother processes kept ${background.meanOtherCores} cores busy on average (busiest run ` +
      `${background.maxOtherCores}; limit ${background.limitCores}): ` +
      (background.quiet ? 'a quiet run' : 'NOT a quiet run'),
  );
  // The host's own speed, which others' load does not show: the 2 KB ceiling (else any ceiling) round by round.
  const ceiling =
    scenarios.find((s) => s.id === 'ceiling-2k') ?? scenarios.find((s) => s.id.startsWith('ceiling'));
  const steadiness = ceiling && hostSteadiness(ceiling.runs.map((r) => r.cpuUsPerReq));
  if (steadiness) log(steadinessLine(steadiness));
  // Figures from a busy machine are printed (above) and kept apart, never published over a quiet run's.
  if (perfReports.length)
    log('\nperf profiles (CPU time, the kernel included):\n' + perfReports.join('\n\n'));
  const publishedDir = join(ROOT, 'bench/results');
  // A profiled server is slower than it would be: its figures are never published either.
  const underProfiler = opts.cpuProf.length > 0 || opts.perf.length > 0;
  const refused = (!background.quiet || underProfiler) && opts.outDir === publishedDir;
  const outDir = refused ? join(ROOT, 'dist-bench/unpublished') : opts.outDir;
  if (refused) mkdirSync(outDir, { recursive: true });

  const finishedAt = new Date().toISOString();
  const result = {
    schema: 1,
    startedAt,
    finishedAt,
    wallS: Math.round((Date.parse(finishedAt) - Date.parse(startedAt)) / 1000),
    commit,
    machine,
    background,
    steadiness,
    options: {
      durationS: opts.durationS,
      warmupS: opts.warmupS,
      rounds: opts.rounds,
      connections: opts.connections,
      burstClients: opts.burstClients,
      redis: Boolean(opts.redisUrl),
      atriumEnv: opts.atriumEnv,
      atriumMain: relative(ROOT, opts.atriumMain),
      atriumNodeArgs: opts.atriumNodeArgs,
    },
    payloads: Object.fromEntries(
      BODY_SIZES.map((s) => [s, { bytes: payload(s).length, md5: md5(payload(s)) }]),
    ),
    servers: [
      ...needed,
      ...(fleet ? (['fleet-vendor', 'fleet-atrium-1', 'fleet-atrium-2', 'fleet-atrium-3'] as const) : []),
      ...(fleet && nginx.bin ? (['fleet-nginx-1', 'fleet-nginx-2', 'fleet-nginx-3'] as const) : []),
    ].map((id) => ({ id, description: SERVER_LABELS[id] })),
    scenarios,
    bursts: burstSummaries,
    fleet: fleetRun
      ? {
          settings: fleetRun.settings,
          traffic: fleetRun.traffic,
          nginxSkipped: fleetRun.nginxSkipped,
          // Call times are summarised per second (the chart has them all).
          results: fleetRun.results.map(({ callTimes, ...r }) => ({
            ...r,
            callsPerSecond: perSecond(callTimes),
          })),
        }
      : null,
    hitBesideNginx: hitVsNginx ?? null,
    nginx: nginx.bin ? { bin: nginx.bin } : { skipped: nginx.why },
    targets,
    figures,
    problems,
    findings,
  };
  writeFileSync(join(outDir, 'latest.json'), JSON.stringify(result, null, 2) + '\n');
  if (fleetRun) writeFileSync(join(outDir, 'fleet.svg'), fleetRun.chart);
  const subtitle =
    `${machine.cpuModel}${machine.cpuId ? ` (${machine.cpuId})` : ''}, ${machine.cpuCount} vCPUs shared by servers and load generator; Node ${machine.node}; ` +
    `${opts.rounds} rounds × ${opts.durationS} s, ${opts.connections} connections; ${startedAt.slice(0, 10)}`;
  writeFileSync(join(outDir, 'chart.svg'), renderChart(scenarios, subtitle));
  const md = summaryMarkdown({
    machine,
    startedAt,
    commit,
    rounds: opts.rounds,
    durationS: opts.durationS,
    connections: opts.connections,
    scenarios,
    bursts: burstSummaries,
    fleet: fleetRun,
    hitBesideNginx: hitVsNginx && hitBesideNginxLine(hitVsNginx),
    nginxSkipped: nginx.bin ? undefined : nginx.why,
    targets,
    figures,
    problems,
    findings,
    steadiness: steadiness && steadinessLine(steadiness),
  });
  writeFileSync(join(outDir, 'summary.md'), md);
  log(
    `\nwrote ${relative(ROOT, join(outDir, 'latest.json'))}, chart.svg, ${fleetRun ? 'fleet.svg, ' : ''}summary.md`,
  );
  if (refused && underProfiler)
    log(`NOT PUBLISHED: measured under a profiler; bench/results and ${PERFORMANCE_DOC} are left alone.`);
  else if (refused)
    log(
      `NOT PUBLISHED: others kept ${background.meanOtherCores} cores busy (> ${background.limitCores}); ` +
        `bench/results and ${PERFORMANCE_DOC} keep the last quiet run's figures. Run again on a quiet machine.`,
    );
  const fullRun = !refused && opts.only.length === 0 && opts.outDir === publishedDir;
  if (fullRun && process.env.BENCH_DOCS !== '0') {
    if (updateResultsBlock(join(ROOT, PERFORMANCE_DOC), md)) log(`updated the results in ${PERFORMANCE_DOC}`);
    else log(`results markers not found; ${PERFORMANCE_DOC} was not updated`);
    const headline = headlineMarkdown({
      startedAt,
      machine,
      fleet: fleetRun,
      hit: hitVsNginx,
      otherCores: background.meanOtherCores,
    });
    if (headline && updateBlock(join(ROOT, 'README.md'), HEADLINE_START, HEADLINE_END, headline))
      log('updated the headline figures in README.md');
  }
  if (opts.keepLogs) log(`server logs kept in ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
  // 3: measured fine but refused publication (a busy machine); 1: the run itself had problems.
  return problems.length ? 1 : refused && !underProfiler ? 3 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(2);
  },
);
