// Where the time goes in a `--cpu-prof` profile (BENCH_CPU_PROF=atrium-hit npm run bench writes them to
// bench/results/profiles): self time by package/area and by function, plus inclusive time of chosen frames.
//   node dist-bench/bench/profile-summary.js bench/results/profiles/atrium-hit-….cpuprofile [top] [skip-seconds]
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** node_modules/<pkg> (scoped too), the gateway's own src area, node internals, or the VM itself. */
export function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/').slice(0, 2).join('/');
  const dist = /\/dist\/(.+?)\/[^/]+\.js$/.exec(url);
  if (dist) return 'atrium/' + dist[1];
  if (/\/dist\/[^/]+\.js$/.test(url)) return 'atrium';
  return url.replace(/^file:\/\//, '');
}

export interface SummaryOptions {
  /** Rows per list. */
  top: number;
  /** Ignore the first seconds of the profile (boot, module loading). */
  skipS: number;
}

/**
 * Self time by area and by function, and inclusive time (the function and everything it called) of the
 * gateway's own functions and the framework frames they run under.
 */
export function summariseProfile(p: Profile, opts: SummaryOptions): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  let t = p.startTime;
  const from = p.startTime + opts.skipS * 1e6;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < from) continue;
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const isIdle = (id: number) => byId.get(id)?.callFrame.functionName === '(idle)';
  const busy = [...self].filter(([id]) => !isIdle(id)).reduce((a, [, v]) => a + v, 0);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const label = (n: ProfileNode) => {
    const { functionName, url, lineNumber } = n.callFrame;
    return `${functionName || '(anonymous)'}  ${areaOf(url, functionName)}${url ? `:${lineNumber + 1}` : ''}`;
  };
  const byArea = new Map<string, number>();
  const byFn = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    if (isIdle(id)) continue;
    const n = byId.get(id)!;
    const area = areaOf(n.callFrame.url, n.callFrame.functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
    byFn.set(label(n), (byFn.get(label(n)) ?? 0) + us);
    // Every distinct frame on this sample's stack gets the sample once (recursion is not double-counted).
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur)!;
      if (
        !/^(atrium|fastify|@nestjs|undici|find-my-way|class-validator|node:_http)/.test(
          areaOf(frame.callFrame.url, frame.callFrame.functionName),
        )
      )
        continue;
      const key = label(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const pct = (us: number) => ((100 * us) / busy).toFixed(1).padStart(5) + '%';
  const list = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, opts.top)
      .map(([k, v]) => `  ${pct(v)}  ${k}`);
  return [
    `profile: ${(total / 1e6).toFixed(1)} s sampled after the first ${opts.skipS} s, ${(busy / 1e6).toFixed(1)} s busy ` +
      '(percentages of busy time)',
    '',
    'self time by area:',
    ...list(byArea),
    '',
    'self time by function:',
    ...list(byFn),
    '',
    'inclusive time (gateway, framework and HTTP frames):',
    ...list(inclusive),
  ].join('\n');
}

if (process.argv[1]?.endsWith('profile-summary.js')) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write(
      'usage: node dist-bench/bench/profile-summary.js <file.cpuprofile> [top] [skip-seconds]\n',
    );
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const top = Number(process.argv[3] ?? 25);
  const skipS = Number(process.argv[4] ?? 0);
  process.stdout.write(summariseProfile(profile, { top, skipS }) + '\n');
}
