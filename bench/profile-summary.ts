// Where the time goes in a `--cpu-prof` profile (BENCH_CPU_PROF=atrium-hit npm run bench writes them to
// bench/results/profiles): self time by package/area and by function, plus inclusive time of chosen frames.
//   node dist-bench/bench/profile-summary.js bench/results/profiles/atrium-hit-….cpuprofile [top]
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

export function summariseProfile(p: Profile, top = 25): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++)
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self.entries()]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)')
    .reduce((a, [, v]) => a + v, 0);
  const busy = total - idle;
  const byArea = new Map<string, number>();
  const byFn = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    if (functionName === '(idle)') continue;
    const area = areaOf(url, functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
    const key = `${functionName || '(anonymous)'}  ${area}${url ? `:${lineNumber + 1}` : ''}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  const pct = (us: number) => ((100 * us) / busy).toFixed(1).padStart(5) + '%';
  const lines = [
    `profile: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (percentages of busy time)`,
    '',
    'self time by area:',
  ];
  for (const [k, v] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(v)}  ${k}`);
  lines.push('', 'self time by function:');
  for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(v)}  ${k}`);
  return lines.join('\n');
}

if (process.argv[1]?.endsWith('profile-summary.js')) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node dist-bench/bench/profile-summary.js <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  process.stdout.write(summariseProfile(profile, Number(process.argv[3] ?? 25)) + '\n');
}
