// nginx with proxy_cache, the peer a user would otherwise pick: started as a plain child process from a
// config generated into a temporary directory (no root, nothing under /etc or /var), one process
// (`master_process off`) so its CPU is one /proc entry.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, untilAnswering, waitForExit, type RunningServer, type ServerId } from './servers.js';

/** The nginx binary (BENCH_NGINX, else `nginx` on the PATH or Debian's /usr/sbin/nginx), or why there is none. */
export function findNginx(env: NodeJS.ProcessEnv = process.env): { bin?: string; why?: string } {
  if (env.BENCH_NGINX === 'off') return { why: 'BENCH_NGINX=off' };
  const candidates = env.BENCH_NGINX ? [env.BENCH_NGINX] : ['nginx', '/usr/sbin/nginx'];
  for (const bin of candidates) {
    try {
      execFileSync(bin, ['-v'], { stdio: 'ignore' });
      return { bin };
    } catch {
      // try the next
    }
  }
  return { why: `${candidates.join(' or ')} not found (Debian: apt-get install -y nginx-light)` };
}

export interface NginxSpec {
  readonly id: ServerId;
  readonly bin: string;
  /** Where the cached answers come from: `<vendor>/<lane>/v2`. */
  readonly upstreamUrl: string;
  /** Consumer path prefix mapped onto the upstream (`/macro/`). */
  readonly prefix: string;
  readonly ttlS: number;
  readonly dir: string;
}

/**
 * The configuration a careful operator would write for a read-through cache in front of a rate-limited
 * vendor: one cache lock per key, stale answers while one background update runs or when the vendor errs
 * or refuses (429), the vendor's caching headers ignored so the TTL is the one set here. nginx keys by URL
 * (`$scheme$proxy_host$request_uri`), and cannot authenticate consumers: it gets none of their keys.
 */
export function nginxConfig(spec: NginxSpec, port: number): string {
  const u = new URL(spec.upstreamUrl);
  const d = spec.dir;
  return `daemon off;
master_process off;
worker_processes 1;
pid ${d}/nginx.pid;
error_log ${d}/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path ${d}/client_body;
  proxy_temp_path ${d}/proxy_temp;
  fastcgi_temp_path ${d}/fastcgi_temp;
  uwsgi_temp_path ${d}/uwsgi_temp;
  scgi_temp_path ${d}/scgi_temp;
  proxy_cache_path ${d}/cache levels=1:2 keys_zone=bench:32m max_size=512m inactive=1h use_temp_path=off;
  upstream vendor { server ${u.host}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location = /__ready { return 200 "ok"; }
    location ${spec.prefix} {
      proxy_pass http://vendor${u.pathname.replace(/\/$/, '')}/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache bench;
      proxy_cache_valid 200 ${spec.ttlS}s;
      proxy_cache_lock on;
      proxy_cache_lock_timeout 10s;
      proxy_cache_lock_age 10s;
      proxy_cache_use_stale error timeout updating http_429 http_500 http_502 http_503 http_504;
      proxy_cache_background_update on;
      proxy_ignore_headers Cache-Control Expires Set-Cookie;
      add_header X-Cache $upstream_cache_status always;
    }
  }
}
`;
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

export async function startNginx(spec: NginxSpec, timeoutMs = 15_000): Promise<RunningServer> {
  mkdirSync(spec.dir, { recursive: true });
  const port = await freePort();
  const conf = join(spec.dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(spec, port));
  const logFile = join(spec.dir, 'stderr.log');
  const fd = openSync(logFile, 'a');
  const child = spawn(spec.bin, ['-p', spec.dir, '-c', conf], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const url = `http://127.0.0.1:${port}`;
  await untilAnswering(child, url + '/__ready', {
    what: `${spec.id} (nginx)`,
    timeoutMs,
    stepMs: 50,
    log: () => `${tail(logFile)}\n${tail(join(spec.dir, 'error.log'))}`,
  });
  return {
    id: spec.id,
    pid: child.pid!,
    port,
    url,
    logFile,
    async stop() {
      if (exited(child)) return;
      // SIGQUIT: graceful shutdown; SIGKILL if it lingers.
      child.kill('SIGQUIT');
      if (!(await waitForExit(child, 5000))) child.kill('SIGKILL');
    },
  };
}
