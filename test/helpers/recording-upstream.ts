import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the vendor received it: the request line's target byte for byte, and its headers. */
export interface ReceivedRequest {
  readonly method: string;
  /** Path and query exactly as sent (no decoding, no reordering). */
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
}

/**
 * A vendor that answers every call with a small 200 (JSON, or XML when the request asks for it by
 * `Accept` or an EMIS `/xml` path) and records what it received. For tests that compare what reached the
 * vendor, whatever the interface: it knows no route.
 */
export class RecordingUpstream {
  readonly received: ReceivedRequest[] = [];
  private server?: Server;
  private base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.received.push({ method: req.method ?? 'GET', target: req.url ?? '/', headers: req.headers });
      req.resume();
      req.on('end', () => {
        const xml = String(req.headers.accept ?? '').includes('xml') || (req.url ?? '').includes('/xml/');
        const body = xml ? '<?xml version="1.0"?><response><data/></response>' : '{"data":[]}';
        res.writeHead(200, { 'content-type': xml ? 'application/xml' : 'application/json' });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get url(): string {
    return this.base;
  }

  reset(): void {
    this.received.length = 0;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
