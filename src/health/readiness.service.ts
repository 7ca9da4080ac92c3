import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { connect } from 'node:net';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { ProxyService } from '../proxy/proxy.service.js';

/** Extra readiness facts contributed by other modules (limits, cache, Redis). */
export interface ReadinessContributor {
  readonly name: string;
  /** `ok: false` makes the gateway not ready. */
  check(): Promise<{ ok: boolean; details?: Record<string, unknown> }>;
}

export const READINESS_CONTRIBUTORS = Symbol('ReadinessContributors');

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
 */
@Injectable()
export class ReadinessService implements BeforeApplicationShutdown {
  private readonly contributors: ReadinessContributor[] = [];
  private shuttingDown = false;

  constructor(
    private readonly proxy: ProxyService,
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
  ) {}

  addContributor(c: ReadinessContributor): void {
    this.contributors.push(c);
  }

  /** Per-upstream facts other modules add (breaker state, cooldown, budget). */
  private readonly upstreamFacts: Array<(name: string) => Record<string, unknown>> = [];

  addUpstreamFacts(fn: (name: string) => Record<string, unknown>): void {
    this.upstreamFacts.push(fn);
  }

  /** Draining: the load balancer should stop sending new requests here. */
  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
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
        for (const f of this.upstreamFacts) Object.assign(out, f(def.name));
        out.degraded = isDegraded(out);
        return out;
      }),
    );
    const checks: Record<string, unknown> = { config: { ok: true } };
    if (this.shuttingDown) checks.shutdown = { ok: false };
    let ok = !this.shuttingDown;
    for (const c of this.contributors) {
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
