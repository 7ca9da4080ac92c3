import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { connect } from 'node:net';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { REDIS_CLIENT, type RedisClient } from '../core/ports/redis.port.js';
import { ProxyService } from '../proxy/proxy.service.js';
import { ResponseCache } from '../proxy/response-cache.service.js';
import { UpstreamLimitsService } from '../proxy/upstream-limits.service.js';

/** One named check of `checks`; `ok: false` makes the gateway not ready. */
interface ReadinessCheck {
  readonly name: string;
  check(): Promise<{ ok: boolean; details?: Record<string, unknown> }>;
}

export interface UpstreamReadiness {
  name: string;
  /** The vendor cannot be used right now (unreachable, breaker open, in cooldown, login backing off). */
  degraded: boolean;
  reachable: boolean;
  sandbox: boolean;
  latencyMs?: number;
  error?: string;
  [k: string]: unknown;
}

function tcpProbe(origin: string, timeoutMs: number): Promise<{ ok: boolean; ms: number; error?: string }> {
  const url = new URL(origin);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port });
    const done = (ok: boolean, error?: string) => {
      socket.destroy();
      resolve({ ok, ms: Math.round(performance.now() - started), error });
    };
    socket.setTimeout(timeoutMs, () => done(false, 'timeout'));
    socket.once('connect', () => done(true));
    socket.once('error', (e: NodeJS.ErrnoException) => done(false, e.code ?? 'error'));
  });
}

/** Why an upstream is degraded, from its facts: never a reason to take this replica out of service. */
function isDegraded(u: UpstreamReadiness): boolean {
  const session = u.session as { state?: string } | undefined;
  return (
    !u.reachable ||
    u.breaker === 'open' ||
    (typeof u.cooldownRemainingSeconds === 'number' && u.cooldownRemainingSeconds > 0) ||
    session?.state === 'backoff'
  );
}

/**
 * Readiness as a load balancer's probe needs it: `ready: false` (503) only when this replica cannot serve
 * (a required check failed, shutting down). A vendor in trouble is the same on every replica, so it is
 * reported (`degraded`) but never makes the replica unready: pulling the whole fleet because one vendor of
 * four is down would take the other three down too.
 *
 * Pulls every fact from what it reports on, at each check: the registered upstreams (and their definitions'
 * `readinessFacts`), their limiters, the response cache and the Redis port. Nobody pushes into it.
 */
@Injectable()
export class ReadinessService implements BeforeApplicationShutdown {
  private shuttingDown = false;
  private readonly checks: readonly ReadinessCheck[];

  constructor(
    private readonly proxy: ProxyService,
    private readonly limits: UpstreamLimitsService,
    cache: ResponseCache,
    @Inject(REDIS_CLIENT) redis: RedisClient,
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
  ) {
    // Informational: a cache in trouble degrades to the upstream.
    const cacheCheck: ReadinessCheck = {
      name: 'cache',
      check: async () => ({ ok: true, details: await cache.stats() }),
    };
    const redisCheck: ReadinessCheck = {
      name: 'redis',
      check: async () => {
        try {
          const started = performance.now();
          await redis!.ping();
          return { ok: true, details: { latencyMs: Math.round(performance.now() - started) } };
        } catch (e) {
          return { ok: false, details: { error: (e as Error).message } };
        }
      },
    };
    this.checks = redis ? [cacheCheck, redisCheck] : [cacheCheck];
  }

  /**
   * Draining: `/health/ready` fails from now on so the load balancer stops sending new requests here, while
   * the server still answers what it is sent (main.ts calls this on SIGTERM, before the drain delay).
   */
  drain(): void {
    this.shuttingDown = true;
  }

  beforeApplicationShutdown(): void {
    this.drain();
  }

  async check(): Promise<{
    ready: boolean;
    status: 'ok' | 'degraded' | 'unready';
    upstreams: UpstreamReadiness[];
    checks: Record<string, unknown>;
  }> {
    const upstreams = await Promise.all(
      this.proxy.all().map(async ({ def, transport }): Promise<UpstreamReadiness> => {
        const probe = await tcpProbe(transport.origin, 1000);
        const out: UpstreamReadiness = {
          name: def.name,
          degraded: false,
          reachable: probe.ok,
          sandbox: this.config.upstreams[def.name]?.sandbox ?? false,
          latencyMs: probe.ms,
        };
        if (probe.error) out.error = probe.error;
        Object.assign(out, this.limits.facts(def.name), def.readinessFacts?.());
        out.degraded = isDegraded(out);
        return out;
      }),
    );
    const checks: Record<string, unknown> = { config: { ok: true } };
    if (this.shuttingDown) checks.shutdown = { ok: false };
    let ok = !this.shuttingDown;
    for (const c of this.checks) {
      try {
        const r = await c.check();
        checks[c.name] = r;
        ok &&= r.ok;
      } catch (e) {
        checks[c.name] = { ok: false, error: (e as Error).message };
        ok = false;
      }
    }
    const status = !ok ? 'unready' : upstreams.some((u) => u.degraded) ? 'degraded' : 'ok';
    return { ready: ok, status, upstreams, checks };
  }
}
