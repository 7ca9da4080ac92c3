import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number; message?: string };
  service?: string;
  /** The resource attributes of the batch it came in (service.name, service.instance.id, …). */
  resource: Record<string, unknown>;
}

type KeyValue = { key: string; value: Record<string, unknown> };
const valueOf = (v: Record<string, unknown>): unknown =>
  v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue ?? undefined;
const attrs = (list: KeyValue[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

/** A small OTLP/HTTP (JSON) collector on port 0: records the spans it is sent. */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server?: Server;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        if (req.url === '/v1/traces' && req.method === 'POST') {
          const doc = JSON.parse(body.toString('utf8'));
          for (const rs of doc.resourceSpans ?? []) {
            const resource = attrs(rs.resource?.attributes);
            const service = resource['service.name'] as string | undefined;
            for (const ss of rs.scopeSpans ?? [])
              for (const s of ss.spans ?? [])
                this.spans.push({
                  traceId: s.traceId,
                  spanId: s.spanId,
                  parentSpanId: s.parentSpanId || undefined,
                  name: s.name,
                  kind: s.kind,
                  attributes: attrs(s.attributes),
                  status: s.status,
                  service,
                  resource,
                });
          }
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  reset(): void {
    this.spans.length = 0;
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}
