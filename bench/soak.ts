// The soak (`npm run soak`): the built gateway (`node dist/main.js`) as its own process in front of
// the sandbox fakes (run here), under a steady mix of cache hits, misses, 429 cooldowns, vendor errors and
// batch calls for SOAK_SECONDS (default 600). A probe loaded into the gateway (bench/soak-probe.ts, IPC)
// reports RSS, heap, event-loop delay and open handles every second. Pass: each grows less than 10 %
// between the second and the last tenth of the run (the second and the last minute of the 10-minute run).
// Writes <SOAK_OUT>/soak.json and soak.svg (default bench/results).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { sandboxEnvFor } from '../src/sandbox-env.js';
import { startSandbox } from '../src/sandbox/start-sandbox.js';
import { UPSTREAM_NAMES, UPSTREAMS } from '../src/upstreams/index.js';
import { envNumber, ROOT } from './lib/options.js';
import { startProbedGateway } from './lib/probed-gateway.js';
import { prng } from './lib/traffic.js';
import type { SoakSample } from './soak-probe.js';

const SECONDS = envNumber('SOAK_SECONDS', 600, 20);
const RATE = envNumber('SOAK_RATE', 80, 1);
const CONNECTIONS = envNumber('SOAK_CONNECTIONS', 8, 1);
const OUT = resolve(process.env.SOAK_OUT ?? join(ROOT, 'bench/results'));
const LIMIT_PCT = 10;

/** What the load sends, by weight: a steady mix, the same every second. */
const MIX = [
  { kind: 'hit', weight: 50 },
  { kind: 'miss', weight: 20 },
  { kind: 'cooldown', weight: 12 },
  { kind: 'vendor-error', weight: 10 },
  { kind: 'batch', weight: 8 },
] as const;
type Kind = (typeof MIX)[number]['kind'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Metric {
  key: 'rss' | 'heapUsed' | 'elMean' | 'handles';
  title: string;
  unit: string;
  scale: number;
  /** How a window is summarised: the median, or (heap) the minimum, the live size after collections. */
  summary: 'median' | 'min';
}

const METRICS: Metric[] = [
  { key: 'rss', title: 'RSS', unit: 'MB', scale: 1 / 1048576, summary: 'median' },
  {
    key: 'heapUsed',
    title: 'heap used (window minimum: live heap after GC)',
    unit: 'MB',
    scale: 1 / 1048576,
    summary: 'min',
  },
  { key: 'elMean', title: 'event-loop delay, mean per second', unit: 'ms', scale: 1, summary: 'median' },
  { key: 'handles', title: 'open handles (active resources)', unit: '', scale: 1, summary: 'median' },
];

interface Point {
  /** Seconds since the load started. */
  s: number;
  sample: SoakSample;
}

function summarise(values: number[], how: 'median' | 'min'): number {
  if (values.length === 0) return NaN;
  const v = [...values].sort((a, b) => a - b);
  return how === 'min'
    ? v[0]
    : v.length % 2
      ? v[(v.length - 1) / 2]
      : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** One panel per metric: the series over time, the two compared windows shaded and labelled. */
function renderChart(
  points: Point[],
  windows: { second: [number, number]; last: [number, number] },
  results: Array<{ metric: Metric; second: number; last: number; growthPct: number; pass: boolean }>,
  subtitle: string,
): string {
  const width = 900;
  const left = 70;
  const right = 20;
  const panelH = 130;
  const gap = 46;
  const top = 64;
  const height = top + results.length * (panelH + gap) + 10;
  const tMax = Math.max(1, ...points.map((p) => p.s));
  const x = (s: number) => left + (s / tMax) * (width - left - right);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">Atrium soak: memory, event loop and handles over time</text>`,
    `<text x="10" y="40" fill="#555">${esc(subtitle)}</text>`,
  ];
  results.forEach((r, i) => {
    const y0 = top + i * (panelH + gap) + 16;
    const values = points.map((p) => p.sample[r.metric.key] * r.metric.scale);
    const max = Math.max(1e-9, ...values) * 1.1;
    const y = (v: number) => y0 + panelH - (v / max) * panelH;
    const verdict = `${r.metric.summary} ${r.second.toFixed(1)} → ${r.last.toFixed(1)} ${r.metric.unit} (${r.growthPct >= 0 ? '+' : ''}${r.growthPct.toFixed(1)} %) ${r.pass ? 'pass' : 'FAIL'}`;
    out.push(
      `<text x="${left}" y="${y0 - 6}" font-weight="bold">${esc(r.metric.title)}</text>`,
      `<text x="${width - right}" y="${y0 - 6}" text-anchor="end" fill="${r.pass ? '#27ae60' : '#c0392b'}">${esc(verdict)}</text>`,
    );
    for (const [name, [a, b]] of Object.entries(windows))
      out.push(
        `<rect x="${x(a).toFixed(1)}" y="${y0}" width="${(x(b) - x(a)).toFixed(1)}" height="${panelH}" fill="${name === 'second' ? '#eaf2f8' : '#fdebd0'}"/>`,
      );
    out.push(
      `<line x1="${left}" y1="${y0 + panelH}" x2="${width - right}" y2="${y0 + panelH}" stroke="#bbb"/>`,
      `<line x1="${left}" y1="${y0}" x2="${left}" y2="${y0 + panelH}" stroke="#bbb"/>`,
      `<text x="${left - 6}" y="${y0 + 4}" text-anchor="end" fill="#555">${max.toFixed(max < 10 ? 1 : 0)}</text>`,
      `<text x="${left - 6}" y="${y0 + panelH}" text-anchor="end" fill="#555">0</text>`,
      `<polyline fill="none" stroke="#27ae60" stroke-width="1.2" points="${points
        .map((p, k) => `${x(p.s).toFixed(1)},${y(values[k]).toFixed(1)}`)
        .join(' ')}"/>`,
    );
    if (i === results.length - 1)
      for (let s = 0; s <= tMax; s += Math.max(10, Math.round(tMax / 10 / 10) * 10))
        out.push(
          `<text x="${x(s).toFixed(1)}" y="${y0 + panelH + 14}" text-anchor="middle" fill="#555">${s} s</text>`,
        );
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-soak-'));
  const key = `atr_soak_${randomBytes(18).toString('base64url')}`;
  // Every upstream of the index played by its sandbox fake, as `npm start` wires them.
  const sandbox = await startSandbox(UPSTREAMS);
  // The company vendor rations: 30 calls, then 429 with Retry-After 2 s, again and again (cooldowns).
  sandbox.company.behave({ rateLimit: { afterCalls: 30, retryAfterSeconds: 2 } });
  // The deal vendor is broken: every call a 502 (vendor errors; its breaker opens and half-opens).
  sandbox.deals.behave({ failWith: { status: 502 } });

  const { child, url, logFile } = await startProbedGateway({
    dir,
    consumer: { id: 'soak', key, upstreams: UPSTREAM_NAMES },
    logLevel: 'info',
    env: {
      // A small cache reaches its byte cap in the first minute: later growth is not the cache filling up.
      ATRIUM_CACHE_MAX_BYTES: String(8 * 1024 * 1024),
      ...sandboxEnvFor(sandbox, UPSTREAM_NAMES),
      UPSTREAM_MACRO_RATE_PER_SEC: '1000',
      UPSTREAM_MACRO_BURST: '1000',
    },
  });
  const samples: Array<{ at: number; sample: SoakSample }> = [];
  child.on('message', (m: { soak?: SoakSample }) => {
    if (m.soak) samples.push({ at: Date.now(), sample: m.soak });
  });
  const pool = new Pool(url, { connections: CONNECTIONS, keepAliveTimeout: 30_000 });

  // The load: CONNECTIONS workers share one schedule of RATE requests per second.
  const auth = { authorization: `Bearer ${key}` };
  const random = prng(18);
  const total = MIX.reduce((n, m) => n + m.weight, 0);
  const pick = (): Kind => {
    let r = random() * total;
    for (const m of MIX) if ((r -= m.weight) < 0) return m.kind;
    return 'hit';
  };
  let unique = 10_000_000;
  const request = (kind: Kind): { method: 'GET' | 'POST'; path: string; body?: string } => {
    switch (kind) {
      case 'hit':
        return { method: 'GET', path: `/macro/series/${100 + Math.floor(random() * 20)}` };
      case 'miss':
        return { method: 'GET', path: `/macro/series/${unique++}` };
      case 'cooldown':
        return { method: 'GET', path: `/company/companies/${unique++}` };
      case 'vendor-error':
        return { method: 'GET', path: `/deals/SearchDeal/getDeals/?keyword=k${unique++}` };
      case 'batch':
        return {
          method: 'POST',
          path: '/batch',
          body: JSON.stringify({
            requests: [
              { path: `/macro/series/${100 + Math.floor(random() * 20)}` },
              { path: `/macro/series/${unique++}` },
              { path: `/company/companies/${unique++}` },
              { path: `/deals/SearchDeal/getDeals/?keyword=b${unique++}` },
            ],
          }),
        };
    }
  };
  const statuses = new Map<string, number>();
  let sent = 0;
  const started = Date.now();
  const end = started + SECONDS * 1000;
  let slot = 0;
  process.stdout.write(
    `soak: ${SECONDS} s at ${RATE} req/s over ${CONNECTIONS} connections (gateway pid ${child.pid})\n`,
  );
  const progress = setInterval(() => {
    const s = samples[samples.length - 1]?.sample;
    if (s)
      process.stdout.write(
        `  ${Math.round((Date.now() - started) / 1000)} s: ${sent} requests, RSS ${(s.rss / 1048576).toFixed(0)} MB, heap ${(s.heapUsed / 1048576).toFixed(0)} MB, ${s.handles} handles\n`,
      );
  }, 30_000);
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      for (;;) {
        const at = started + (slot++ * 1000) / RATE;
        if (at >= end) return;
        if (at > Date.now()) await sleep(at - Date.now());
        const kind = pick();
        const r = request(kind);
        sent++;
        let label: string;
        try {
          const res = await pool.request({
            method: r.method,
            path: r.path,
            headers: r.body ? { ...auth, 'content-type': 'application/json' } : auth,
            body: r.body,
            headersTimeout: 30_000,
            bodyTimeout: 30_000,
          });
          await res.body.dump();
          label = `${kind} ${res.statusCode}`;
        } catch (e) {
          label = `${kind} failed: ${(e as Error).message}`;
        }
        statuses.set(label, (statuses.get(label) ?? 0) + 1);
      }
    }),
  );
  clearInterval(progress);
  await sleep(1500);
  await pool.close();
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
  await sandbox.close();

  // The comparison: the second tenth of the run against the last tenth (minutes 2 and 10 of a 10-minute run).
  const points: Point[] = samples
    .map((p) => ({ s: (p.at - started) / 1000, sample: p.sample }))
    .filter((p) => p.s >= 0 && p.s <= SECONDS);
  const w = SECONDS / 10;
  const windows = {
    second: [w, 2 * w] as [number, number],
    last: [SECONDS - w, SECONDS] as [number, number],
  };
  const inWindow = ([a, b]: [number, number]) => points.filter((p) => p.s >= a && p.s < b);
  const results = METRICS.map((metric) => {
    const of = (ps: Point[]) =>
      summarise(
        ps.map((p) => p.sample[metric.key] * metric.scale),
        metric.summary,
      );
    const second = of(inWindow(windows.second));
    const last = of(inWindow(windows.last));
    const growthPct = ((last - second) / second) * 100;
    return { metric, second, last, growthPct, pass: Number.isFinite(growthPct) && growthPct < LIMIT_PCT };
  });
  const pass = results.every((r) => r.pass);
  const subtitle = `${SECONDS} s at ${RATE} req/s (${MIX.map((m) => `${m.kind} ${m.weight} %`).join(', ')}); windows ${w} s; ${new Date().toISOString().slice(0, 10)}`;
  mkdirSync(OUT, { recursive: true });
  const doc = {
    at: new Date().toISOString(),
    seconds: SECONDS,
    rate: RATE,
    connections: CONNECTIONS,
    mix: MIX,
    sent,
    answers: Object.fromEntries([...statuses].sort()),
    windows,
    limitPct: LIMIT_PCT,
    results: results.map((r) => ({
      metric: r.metric.key,
      summary: r.metric.summary,
      unit: r.metric.unit,
      second: r.second,
      last: r.last,
      growthPct: r.growthPct,
      pass: r.pass,
    })),
    pass,
    samples: points.map((p) => ({ s: Math.round(p.s * 10) / 10, ...p.sample })),
  };
  writeFileSync(join(OUT, 'soak.json'), JSON.stringify(doc, null, 2) + '\n');
  writeFileSync(join(OUT, 'soak.svg'), renderChart(points, windows, results, subtitle));
  process.stdout.write(
    `\n${sent} requests: ${[...statuses]
      .sort()
      .map(([k, v]) => `${k} ×${v}`)
      .join(', ')}\n\n` +
      `| measure | second tenth | last tenth | growth | verdict (< ${LIMIT_PCT} %) |\n|---|---|---|---|---|\n` +
      results
        .map(
          (r) =>
            `| ${r.metric.key} (${r.metric.summary}) | ${r.second.toFixed(2)} ${r.metric.unit} | ${r.last.toFixed(2)} ${r.metric.unit} | ${r.growthPct >= 0 ? '+' : ''}${r.growthPct.toFixed(1)} % | ${r.pass ? 'pass' : 'FAIL'} |`,
        )
        .join('\n') +
      `\n\nwritten to ${join(OUT, 'soak.json')} and soak.svg (gateway log: ${logFile})\n`,
  );
  if (pass) rmSync(dir, { recursive: true, force: true });
  process.exit(pass ? 0 : 1);
}

main().catch((e: unknown) => {
  process.stderr.write(`soak failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
