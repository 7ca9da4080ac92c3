import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP relay in front of a real server (Redis, PostgreSQL), so a test can take that server "down"
 * or slow for the gateway alone: cut() drops every connection and stops listening, restore() listens again on
 * the same port; `delayMs` holds every chunk, in both directions, that long before passing it on (in order).
 * If the target is gone, the client's connection is closed, as a dead server's would be.
 */
export class TcpRelay {
  delayMs = 0;
  port = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();

  /** `targetPort` may be a function: a target restarted on another port is followed. */
  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number | (() => number),
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<void> {
    const server = createServer((client) => {
      const port = typeof this.targetPort === 'function' ? this.targetPort() : this.targetPort;
      const upstream = connect(port, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      this.relay(client, upstream);
      this.relay(upstream, client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  private relay(from: Socket, to: Socket): void {
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
    // A half-close passes on as pipe() would pass it on (after any chunk still held).
    from.on('end', () => {
      if (this.delayMs <= 0) to.end();
      else {
        const t = setTimeout(() => {
          this.timers.delete(t);
          to.end();
        }, this.delayMs);
        this.timers.add(t);
      }
    });
  }

  /** Drops every connection (and every held chunk) and stops listening. */
  async cut(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }

  async restore(): Promise<void> {
    await this.start(this.port);
  }
}
