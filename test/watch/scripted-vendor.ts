import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A vendor whose answers a test sets per path (`{"data":[{"value":<n>}]}`) and which counts the GETs it
 * receives per path (query left out): what the fleet's polls cost the vendor.
 */
export class ScriptedVendor {
  readonly calls = new Map<string, number>();
  private readonly values = new Map<string, number>();
  private server?: Server;
  private base = '';

  set(path: string, value: number): void {
    this.values.set(path, value);
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
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: [{ value: this.values.get(path) ?? 0 }] }));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get url(): string {
    return this.base;
  }

  reset(): void {
    this.calls.clear();
    this.values.clear();
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
