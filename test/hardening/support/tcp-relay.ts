import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP relay in front of Redis that can add latency: every chunk, in both directions, is held
 * `delayMs` before it is passed on (in order). With delay 0 it is a plain pipe. If the target is gone, the
 * client's connection is closed, as a dead Redis would.
 */
export class DelayRelay {
  delayMs = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  port = 0;

  constructor(private readonly targetPort: () => number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort(), '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      const relay = (from: Socket, to: Socket) =>
        from.on('data', (chunk: Buffer) => {
          if (this.delayMs <= 0) {
            if (!to.destroyed) to.write(chunk);
            return;
          }
          // Same delay for every chunk: timers fire in insertion order, so the stream stays in order.
          const t = setTimeout(() => {
            this.timers.delete(t);
            if (!to.destroyed) to.write(chunk);
          }, this.delayMs);
          this.timers.add(t);
        });
      relay(client, upstream);
      relay(upstream, client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }
}
