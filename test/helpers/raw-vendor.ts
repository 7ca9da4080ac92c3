import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type VendorHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A hostile vendor for the defect regressions: a plain node:http server on loopback whose answer each test
 * scripts by hand (trickles, stalls, garbage), recording every request and the socket it came on, so a test
 * can see what the vendor received and whether the gateway hung up.
 */
export class RawVendor {
  readonly requests: Array<{ path: string; query: URLSearchParams; socket: Socket }> = [];
  handler: VendorHandler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"data":[]}');
  };
  private readonly server: Server;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor() {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://vendor');
      this.requests.push({ path: url.pathname, query: url.searchParams, socket: req.socket });
      this.handler(req, res);
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Runs `fn` every `ms` until it returns false or the socket closes; the vendor's own timers end on close(). */
  every(ms: number, res: ServerResponse, fn: () => boolean): void {
    const t = setInterval(() => {
      if (res.destroyed || !fn()) {
        clearInterval(t);
        this.timers.delete(t);
      }
    }, ms);
    this.timers.add(t);
  }

  reset(): void {
    this.requests.length = 0;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}
