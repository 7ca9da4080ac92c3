import { connect, type Socket } from 'node:net';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { eventually } from '../helpers/eventually.js';
import { testConsumer } from '../helpers/consumers.js';
import { startGateway } from '../helpers/gateway.js';

/**
 * Draining (configure-app.ts): a request in flight when close() starts finishes with its whole answer on its
 * keep-alive connection, the connection is closed once idle, and close() returns without waiting for the
 * keep-alive timeout (72 s). What the client saw is read from the raw socket.
 */
describe('close() drains in-flight requests', () => {
  const TOKEN = 'sbx_test_drain_macro_0123456789';
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const consumer = testConsumer({ id: 'drain' });

  beforeAll(() => fake.start());
  afterAll(() => fake.close());

  it('the in-flight answer arrives whole, then the connection closes and close() returns promptly', async () => {
    const gw = await startGateway({
      env: { UPSTREAM_MACRO_BASE_URL: fake.url, UPSTREAM_MACRO_TOKEN: TOKEN },
      consumers: [consumer.consumer],
    });
    const { port } = new URL(gw.url);
    const socket: Socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));

    fake.behave({ latencyMs: 400 });
    socket.write(
      `GET /macro/series/310902320/data HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${consumer.key}\r\n` +
        'Connection: keep-alive\r\n\r\n',
    );
    // The request is at the vendor: close the gateway while it waits.
    await eventually(() => fake.requests.length > 0, { intervalMs: 10, what: 'the request at the vendor' });
    expect(fake.requests).toHaveLength(1);
    const closingAt = Date.now();
    await gw.close();
    const closedAt = Date.now();
    const socketClosedAt = await closed;

    expect(received.startsWith('HTTP/1.1 200 OK')).toBe(true);
    const length = Number(/content-length: (\d+)/i.exec(received)?.[1]);
    expect(received.length - received.indexOf('\r\n\r\n') - 4).toBe(length);
    // Well under the 72 s keep-alive timeout: the idle connection was closed, not waited for.
    expect(closedAt - closingAt).toBeLessThan(5_000);
    expect(socketClosedAt - closingAt).toBeLessThan(5_000);
  });
});
