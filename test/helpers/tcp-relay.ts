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
  /**
   * Sees every chunk as it arrives, before it is held or passed on (`toClient`: from the server): a test may
   * change `delayMs` there for what comes next, so a later chunk overtakes a held one.
   */
  onChunk?: (chunk: Buffer, toClient: boolean) => void;
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
      this.relay(client, upstream, false);
      this.relay(upstream, client, true);
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

  private relay(from: Socket, to: Socket, toClient: boolean): void {
    // Each chunk (null: the half-close) is due at its arrival plus the delay then, and never before the one
    // ahead of it on this connection, so the stream stays in order when the delay changes.
    const held: Array<{ chunk: Buffer | null; at: number }> = [];
    let timer: NodeJS.Timeout | undefined;
    const pass = (chunk: Buffer | null) => {
      if (to.destroyed) return;
      if (chunk) to.write(chunk);
      else to.end();
    };
    const drain = () => {
      if (timer) this.timers.delete(timer);
      timer = undefined;
      while (held.length > 0 && held[0].at <= Date.now()) pass(held.shift()!.chunk);
      if (held.length === 0) return;
      timer = setTimeout(drain, held[0].at - Date.now());
      this.timers.add(timer);
    };
    const hold = (chunk: Buffer | null, delayMs: number) => {
      if (delayMs <= 0 && held.length === 0) return pass(chunk);
      held.push({ chunk, at: Math.max(Date.now() + delayMs, held.at(-1)?.at ?? 0) });
      if (!timer) drain();
    };
    from.on('data', (chunk: Buffer) => {
      const delayMs = this.delayMs;
      this.onChunk?.(chunk, toClient);
      hold(chunk, delayMs);
    });
    // A half-close passes on as pipe() would pass it on (after any chunk still held).
    from.on('end', () => hold(null, this.delayMs));
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
