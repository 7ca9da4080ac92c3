import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { Env } from './env-check.js';

/** The gateway-wide secrets that may come from a file as `<NAME>_FILE` (the per-upstream ones are added). */
export const GATEWAY_SECRETS = [
  'ATRIUM_OPERATOR_TOKEN',
  'ATRIUM_ADMIN_TOKEN',
  'ATRIUM_METRICS_TOKEN',
  'ATRIUM_LINK_SECRET',
  'REDIS_URL',
  'REDIS_PASSWORD',
  'REDIS_SENTINEL_PASSWORD',
  'DATABASE_URL',
] as const;

/** Per upstream: `UPSTREAM_<NAME>_<FIELD>` may come from `UPSTREAM_<NAME>_<FIELD>_FILE`. */
export const UPSTREAM_SECRET_FIELDS = ['TOKEN', 'USERNAME', 'PASSWORD'] as const;

/** Every variable that may be given as `<NAME>_FILE`, for these upstream names. */
export function secretNames(upstreams: readonly string[]): string[] {
  return [
    ...GATEWAY_SECRETS,
    ...upstreams.flatMap((n) => UPSTREAM_SECRET_FIELDS.map((f) => `UPSTREAM_${n.toUpperCase()}_${f}`)),
  ];
}

/** A file's secret: its content without the trailing line break editors and `echo` add. */
function readSecret(path: string): string {
  return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
}

/**
 * `<NAME>_FILE` read into `<NAME>` for every secret of `names`: the environment with the values filled
 * in, where each came from, and what is wrong (both forms set, an unreadable or empty file), by variable
 * name, never by value.
 */
export function resolveSecretFiles(
  env: Env,
  names: readonly string[],
): { env: Env; files: Map<string, string>; problems: string[] } {
  const out: Env = { ...env };
  const files = new Map<string, string>();
  const problems: string[] = [];
  for (const name of names) {
    const path = env[`${name}_FILE`];
    if (!path) continue;
    if (env[name]) {
      problems.push(`${name}_FILE (${name} is set too: set one of them)`);
      continue;
    }
    let value: string;
    try {
      value = readSecret(path);
    } catch (e) {
      problems.push(`${name}_FILE (cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? 'error'})`);
      continue;
    }
    if (!value) {
      problems.push(`${name}_FILE (${path} is empty)`);
      continue;
    }
    out[name] = value;
    files.set(name, path);
  }
  return { env: out, files, problems };
}

/** One secret as it is now: its file re-read when it changes (SecretFiles), or a fixed value. */
export interface LiveSecret {
  /** The variable (`UPSTREAM_MACRO_TOKEN`), for messages. */
  readonly name: string;
  /** The value in force. */
  value(): string;
  /** Re-reads the file now (a vendor refused the key: it may just have been rotated); true when it changed. */
  reread(): boolean;
  /** Called with the new value after every change. */
  onChange(listener: (value: string) => void): void;
}

export interface SecretFilesOptions {
  /** Poll period: the fallback when no file-system event arrives (network volumes, some container mounts). */
  readonly pollMs?: number;
  readonly onChanged?: (name: string) => void;
  readonly onRefused?: (name: string, reason: string) => void;
}

/**
 * The secrets read from files, kept current: each file is re-read when its directory changes (fs.watch on
 * the directory sees Kubernetes' `..data` symlink swap of a mounted secret, which a watch on the file
 * itself misses), on a poll as a fallback, on SIGHUP (`rereadAll`) and on demand (`LiveSecret.reread`). A
 * file that turns empty or unreadable keeps the previous value in force (a writer caught mid-write).
 * Hand-written: the secret stores' libraries (vault agents, CSI drivers) write these files; reading them
 * is the gateway's part, and no kept library watches a file with symlink swaps and a poll fallback.
 */
export class SecretFiles {
  private readonly values = new Map<string, string>();
  private readonly listeners = new Map<string, Array<(value: string) => void>>();
  private readonly watchers: FSWatcher[] = [];
  private poll?: NodeJS.Timeout;
  private opts: SecretFilesOptions = {};

  constructor(
    private readonly files: ReadonlyMap<string, string>,
    env: Env,
  ) {
    for (const name of files.keys()) this.values.set(name, env[name] ?? '');
  }

  /** Variables read from a file. */
  names(): string[] {
    return [...this.files.keys()];
  }

  fileOf(name: string): string | undefined {
    return this.files.get(name);
  }

  /** A secret kept current from its file, or undefined when `name` was not given as a file. */
  live(name: string): LiveSecret | undefined {
    if (!this.files.has(name)) return undefined;
    return {
      name,
      value: () => this.values.get(name)!,
      reread: () => this.reread(name),
      onChange: (listener) => {
        const list = this.listeners.get(name) ?? [];
        list.push(listener);
        this.listeners.set(name, list);
      },
    };
  }

  /** Re-reads one file; true when its value changed (listeners have been called). */
  reread(name: string): boolean {
    const path = this.files.get(name);
    if (!path) return false;
    let value: string;
    try {
      value = readSecret(path);
    } catch (e) {
      this.opts.onRefused?.(name, `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
      return false;
    }
    if (!value) {
      this.opts.onRefused?.(name, `${path} is empty`);
      return false;
    }
    if (value === this.values.get(name)) return false;
    this.values.set(name, value);
    for (const l of this.listeners.get(name) ?? []) l(value);
    this.opts.onChanged?.(name);
    return true;
  }

  /** Re-reads every file (SIGHUP); the names that changed. */
  rereadAll(): string[] {
    return this.names().filter((n) => this.reread(n));
  }

  /** Starts watching (boot); `close()` stops. */
  watch(opts: SecretFilesOptions = {}): void {
    this.opts = opts;
    if (this.files.size === 0) return;
    const byDir = new Map<string, string[]>();
    for (const [name, path] of this.files) {
      const dir = dirname(path);
      byDir.set(dir, [...(byDir.get(dir) ?? []), name]);
    }
    for (const [dir, names] of byDir) {
      try {
        const w = watch(dir, { persistent: false }, () => {
          for (const n of names) this.reread(n);
        });
        w.on('error', () => w.close());
        this.watchers.push(w);
      } catch {
        // No events for this directory (not supported here): the poll below still sees every change.
      }
    }
    this.poll = setInterval(() => this.rereadAll(), opts.pollMs ?? 1_000);
    this.poll.unref();
  }

  close(): void {
    for (const w of this.watchers.splice(0)) w.close();
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }
}
