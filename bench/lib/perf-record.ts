// CPU profiles by the kernel's sampler (`perf record`), for BENCH_PERF=<server ids>. V8's own profiler
// (BENCH_CPU_PROF) samples wall-clock time: a server that is preempted inside `writev` (the write wakes the
// client, which takes the core) is charged for the client's time there, which made the answer's write look
// like 40-60 % of a cache hit. `perf` samples CPU time only, the kernel's part included. The JIT's
// JavaScript frames are named from the dump `--perf-prof` writes (every code object with its name and
// load time, turned into symbols by `perf inject --jit`): the map file of `--perf-basic-prof` has no load
// times, so where the JIT freed code and reused its address a frame took a later function's name.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Whether `perf` can be run here (a missing binary or a kernel that forbids it: the runner says so). */
export function perfAvailable(): boolean {
  const r = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  return r.status === 0;
}

/**
 * Node flags for a server profiled with perf: the JIT dump (`jit-<pid>.dump`, in the process's working
 * directory: start it in `perfWorkDir`, whose files `perf inject` reads and multiplies).
 */
export const PERF_NODE_ARGS: readonly string[] = ['--perf-prof'];

/** The working directory of a profiled server under `dir`: its JIT dump and the injected symbols go there. */
export function perfWorkDir(dir: string): string {
  const work = join(dir, 'jit');
  mkdirSync(work, { recursive: true });
  return work;
}

/** A recording attached to one process; `stop()` ends it and resolves with the data file. */
export interface PerfRecording {
  readonly file: string;
  stop(): Promise<string>;
}

/**
 * Attaches `perf record` (CPU samples with call graphs, 999 Hz) to `pid` until `stop()`, which resolves with
 * the data file with the JIT's symbols injected (the raw file when `perf inject` fails).
 */
export function recordPerf(pid: number, dir: string, name: string): PerfRecording {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.perf.data`);
  // The monotonic clock: the one the JIT dump's load times are on.
  const child: ChildProcess = spawn(
    'perf',
    ['record', '-q', '-k', 'mono', '-F', '999', '-g', '-o', file, '-p', String(pid)],
    { stdio: 'ignore' },
  );
  const injected = (): string => {
    const out = join(dir, `${name}.jit.perf.data`);
    const r = spawnSync('perf', ['inject', '--jit', '-i', file, '-o', out], { stdio: 'ignore' });
    return r.status === 0 ? out : file;
  };
  return {
    file,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(injected());
        child.once('exit', () => resolve(injected()));
        child.kill('SIGINT'); // perf writes its data file on SIGINT
      }),
  };
}

/** One line of `perf report`: inclusive and self share of the samples. */
interface ReportLine {
  readonly children: number;
  readonly self: number;
  readonly symbol: string;
}

/** The lines of `perf report --children --sort sym -g none --stdio` (headers and blank lines skipped). */
export function parsePerfReport(text: string): ReportLine[] {
  const out: ReportLine[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s+([\d.]+)%\s+([\d.]+)%\s+\[(.)\]\s+(.*)$/.exec(line);
    if (m) out.push({ children: Number(m[1]), self: Number(m[2]), symbol: `[${m[3]}] ${m[4].trim()}` });
  }
  return out;
}

function reportLines(file: string): ReportLine[] {
  const r = spawnSync(
    'perf',
    ['report', '-i', file, '--children', '--sort', 'sym', '-g', 'none', '--stdio'],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  return r.status === 0 ? parsePerfReport(r.stdout) : [];
}

/**
 * The CPU of one profiled run as µs per request: the kernel's share (system calls, the network stack) and
 * the user side's, then the JavaScript frames with the most inclusive time (the gateway's, the framework's,
 * Node's), which is where work can be taken out.
 */
export function summarisePerf(file: string, cpuUsPerReq: number, top = 30): string {
  const lines = reportLines(file);
  if (lines.length === 0) return `perf report could not read ${file}`;
  return `${file}: ${summariseReport(lines, cpuUsPerReq, top)}`;
}

/** The summary of parsed report lines (see summarisePerf). */
export function summariseReport(lines: readonly ReportLine[], cpuUsPerReq: number, top = 30): string {
  const selfKernel = lines.filter((l) => l.symbol.startsWith('[k]')).reduce((a, l) => a + l.self, 0);
  const us = (pct: number) => ((pct / 100) * cpuUsPerReq).toFixed(1).padStart(6);
  const js = lines
    .filter((l) => l.symbol.startsWith('[.] JS:'))
    .sort((a, b) => b.children - a.children)
    .slice(0, top);
  const gc = lines
    .filter((l) => /Scavenge|MarkCompact|ConcurrentMarking|Sweeper/.test(l.symbol))
    .reduce((a, l) => a + l.self, 0);
  return [
    `${cpuUsPerReq.toFixed(1)} µs of CPU per request`,
    `  kernel (self)      ${selfKernel.toFixed(1).padStart(5)} %  ≈ ${us(selfKernel)} µs`,
    `  user side (self)   ${(100 - selfKernel).toFixed(1).padStart(5)} %  ≈ ${us(100 - selfKernel)} µs`,
    `  garbage collector  ${gc.toFixed(1).padStart(5)} %  ≈ ${us(gc)} µs`,
    '  JavaScript frames by inclusive time (the frame and all it called, the kernel included):',
    ...js.map(
      (l) => `    ${l.children.toFixed(1).padStart(5)} %  ≈ ${us(l.children)} µs  ${l.symbol.slice(8)}`,
    ),
  ].join('\n');
}
