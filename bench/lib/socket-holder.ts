// Holds idle connections to a gateway in a process of its own (`fork`ed by bench/watch-idle.ts), so the load
// generator measuring the hit beside them does not share an event loop and a heap with 10,000 sockets:
// what the figure shows is the gateway's cost of holding them, not the client's.
//   parent → { open: HoldSpec }   child → { opened: seconds } | { failed: message }
// The child exits when its parent goes away (the IPC channel closes), closing every socket.
import { connect, type Socket } from 'node:net';

export interface HoldSpec {
  readonly port: number;
  /** The request each connection makes once, then holds its connection idle. */
  readonly request: string;
  /** What the first answer must contain before the connection counts as open. */
  readonly openedWhen: string;
  readonly count: number;
  /** Connections opening at once. */
  readonly batch: number;
}

function hold(o: HoldSpec, sockets: Socket[]): Promise<void> {
  return new Promise((res, rej) => {
    const s = connect(o.port, '127.0.0.1');
    sockets.push(s);
    let seen = '';
    const t = setTimeout(() => rej(new Error('a connection got no answer in 60 s')), 60_000);
    s.setEncoding('utf8');
    const first = (chunk: string) => {
      seen += chunk;
      if (/^HTTP\/1\.1 [45]\d\d/.test(seen)) {
        clearTimeout(t);
        rej(new Error(`refused: ${seen.slice(0, 300)}`));
      } else if (seen.includes(o.openedWhen)) {
        clearTimeout(t);
        seen = '';
        // Idle from here: whatever comes (heartbeats) is read and dropped.
        s.off('data', first);
        s.on('data', () => undefined);
        res();
      }
    };
    s.on('data', first);
    s.on('error', (e) => {
      clearTimeout(t);
      rej(e);
    });
    s.write(o.request);
  });
}

async function openAll(o: HoldSpec, sockets: Socket[]): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < o.count; i += o.batch) {
    const batch: Promise<void>[] = [];
    for (let j = i; j < Math.min(o.count, i + o.batch); j++) batch.push(hold(o, sockets));
    await Promise.all(batch);
  }
  return (performance.now() - started) / 1000;
}

if (process.send) {
  const sockets: Socket[] = [];
  process.on('message', (m: { open?: HoldSpec }) => {
    if (!m.open) return;
    openAll(m.open, sockets).then(
      (seconds) => process.send!({ opened: seconds }),
      (e: Error) => process.send!({ failed: e.message }),
    );
  });
  process.on('disconnect', () => {
    for (const s of sockets) s.destroy();
    process.exit(0);
  });
}
