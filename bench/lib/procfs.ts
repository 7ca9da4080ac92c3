import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';

function clockTicks(): number {
  try {
    const v = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    if (v > 0) return v;
  } catch {
    // getconf missing: Linux has used 100 on every architecture we run on.
  }
  return 100;
}

export const CLK_TCK = clockTicks();

/**
 * CPU seconds (user + system, all threads) a process has used so far. Fields 14 and 15 of
 * `/proc/<pid>/stat`, counted after the `)` that ends the command name (which may contain spaces).
 */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/**
 * CPU seconds the whole machine has been busy (all CPUs: user, nice, system, irq, softirq, steal), from the
 * first line of /proc/stat. Minus what the bench's own processes used, it tells how busy others kept the cores.
 */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  return (f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0)) / CLK_TCK;
}

function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** Peak resident set size in bytes since start or since the last `resetPeakRss`. */
export function peakRssBytes(pid: number): number {
  return statusKb(pid, 'VmHWM') * 1024;
}

export function rssBytes(pid: number): number {
  return statusKb(pid, 'VmRSS') * 1024;
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0), so the next peak read covers one run. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface MachineInfo {
  cpuModel: string;
  /** `cpu family` / `model` / `stepping` from /proc/cpuinfo: identifies the part when the name is generic. */
  cpuId: string;
  cpuCount: number;
  cpuMHz: number;
  kernel: string;
  node: string;
  clkTck: number;
  loadAverageAtStart: number[];
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  let model = list[0]?.model ?? 'unknown';
  let cpuId = '';
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.+)$`, 'm').exec(info)?.[1].trim();
    // /proc/cpuinfo sometimes carries a fuller name than os.cpus() (e.g. under KVM).
    const name = field('model name');
    if (name && name.length > model.length) model = name;
    const family = field('cpu family');
    if (family)
      cpuId = `family ${family}, model ${field('model') ?? '?'}, stepping ${field('stepping') ?? '?'}`;
  } catch {
    // not Linux: keep os.cpus()
  }
  return {
    cpuModel: model,
    cpuId,
    cpuCount: list.length,
    cpuMHz: list[0]?.speed ?? 0,
    kernel: release(),
    node: process.version,
    clkTck: CLK_TCK,
    loadAverageAtStart: loadavg().map((v) => Math.round(v * 100) / 100),
  };
}
