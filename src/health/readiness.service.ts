import { Inject, Injectable } from '@nestjs/common';
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

@Injectable()
export class ReadinessService {
  private readonly contributors: ReadinessContributor[] = [];

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

  async check(): Promise<{
    status: 'ok' | 'degraded';
    upstreams: UpstreamReadiness[];
    checks: Record<string, unknown>;
  }> {
    const upstreams = await Promise.all(
      this.proxy.all().map(async ({ def, transport }): Promise<UpstreamReadiness> => {
        const probe = await tcpProbe(transport.origin, 1000);
        const out: UpstreamReadiness = {
          name: def.name,
          reachable: probe.ok,
          sandbox: this.config.upstreams[def.name as keyof AtriumConfig['upstreams']]?.sandbox ?? false,
          latencyMs: probe.ms,
        };
        if (probe.error) out.error = probe.error;
        for (const f of this.upstreamFacts) Object.assign(out, f(def.name));
        return out;
      }),
    );
    const checks: Record<string, unknown> = { config: { ok: true } };
    let ok = upstreams.every((u) => u.reachable);
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
    return { status: ok ? 'ok' : 'degraded', upstreams, checks };
  }
}
