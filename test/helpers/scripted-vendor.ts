import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A vendor whose answers a test sets per path (`{"data":[{"value":<n>}]}`) and which counts the GETs it
 * receives per path (query left out): what the fleet's polls cost the vendor.
 */
export class ScriptedVendor {
  readonly calls = new Map<string, number>();
  /** When each call arrived (epoch ms), per path. */
  readonly times = new Map<string, number[]>();
  private readonly limited = new Map<string, number>();
  /** When the last 429 was sent (epoch ms). */
  limitedAt?: number;
  private readonly values = new Map<string, number>();
  private readonly bodies = new Map<string, unknown>();
  /** Filler bytes in each answer of a path (a large answer). */
  private readonly padding = new Map<string, number>();
  /** How long each answer of a path takes (a slow vendor). */
  private readonly slow = new Map<string, number>();
  /** Calls of a path still to fail, and with which status. */
  private readonly failing = new Map<string, { left: number; status: number }>();
  private server?: Server;
  private base = '';

  set(path: string, value: number): void {
    this.values.set(path, value);
  }

  /** `path` answers this JSON instead (a release calendar, say). */
  setBody(path: string, body: unknown): void {
    this.bodies.set(path, body);
  }

  /** Each answer of `path` carries `bytes` of filler beside its value. */
  pad(path: string, bytes: number): void {
    this.padding.set(path, bytes);
  }

  /** Each answer of `path` leaves `ms` after its request arrived. */
  delay(path: string, ms: number): void {
    this.slow.set(path, ms);
  }

  /** The next `n` calls of `path` fail with `status` (a vendor error). */
  failNext(path: string, n: number, status = 500): void {
    this.failing.set(path, { left: n, status });
  }

  /** The next call of `path` answers 429 with `Retry-After: seconds` (the vendor's rate limit). */
  rateLimitOnce(path: string, seconds: number): void {
    this.limited.set(path, seconds);
  }

  callsTo(path: string): number {
    return this.calls.get(path) ?? 0;
  }

  get total(): number {
    let n = 0;
    for (const c of this.calls.values()) n += c;
    return n;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      this.calls.set(path, (this.calls.get(path) ?? 0) + 1);
      this.times.set(path, [...(this.times.get(path) ?? []), Date.now()]);
      req.resume();
      req.on('end', () => setTimeout(answer, this.slow.get(path) ?? 0));
      const answer = () => {
        const limit = this.limited.get(path);
        if (limit !== undefined) {
          this.limited.delete(path);
          this.limitedAt = Date.now();
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(limit) });
          res.end(JSON.stringify({ message: 'Too many requests' }));
          return;
        }
        const failing = this.failing.get(path);
        if (failing && failing.left > 0) {
          failing.left--;
          res.writeHead(failing.status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ message: 'Internal error' }));
          return;
        }
        const pad = this.padding.get(path);
        res.writeHead(200, { 'content-type': 'application/json' });
        const body = this.bodies.get(path) ?? {
          data: [{ value: this.values.get(path) ?? 0, ...(pad ? { filler: 'x'.repeat(pad) } : {}) }],
        };
        res.end(JSON.stringify(body));
      };
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get url(): string {
    return this.base;
  }

  reset(): void {
    this.calls.clear();
    this.times.clear();
    this.values.clear();
    this.bodies.clear();
    this.padding.clear();
    this.slow.clear();
    this.failing.clear();
    this.limited.clear();
    this.limitedAt = undefined;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
