import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { SseClient } from '../helpers/sse.js';
import { withGateway } from '../helpers/gateway.js';
import { ScriptedVendor } from '../helpers/scripted-vendor.js';

/**
 * A watch stream whose client stops reading while its answers keep changing (large answers, changed every
 * poll): the replica holds what the stream's buffers took before they were full, never the backlog. When
 * the client reads again it gets each path's latest answer, and a reconnect with its last event id too.
 */
const TTL_MS = 100;
// Large answers: the kernel's socket buffers on loopback take tens of megabytes before the replica has to hold any.
const PAD = 1_000_000;
const enc = encodeURIComponent;

interface Event {
  event: string;
  id?: string;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary bodies
}

/** An SSE client over node:http whose reading the test stops (`pause`) and starts again (`resume`). */
class PausableClient {
  readonly events: Event[] = [];
  ended = false;
  private buf = '';
  private res?: IncomingMessage;
  private req?: ClientRequest;

  static open(url: string, headers: Record<string, string>): Promise<PausableClient> {
    const c = new PausableClient();
    return new Promise((resolve, reject) => {
      c.req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        c.res = res;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => c.take(chunk));
        res.on('end', () => (c.ended = true));
        res.on('error', () => (c.ended = true));
        resolve(c);
      });
      c.req.on('error', reject);
      c.req.end();
    });
  }

  private take(chunk: string): void {
    this.buf += chunk;
    let end: number;
    while ((end = this.buf.indexOf('\n\n')) !== -1) {
      const block = this.buf.slice(0, end);
      this.buf = this.buf.slice(end + 2);
      const e: Partial<Event> = { event: 'message' };
      let data: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) e.event = line.slice(7);
        else if (line.startsWith('id: ')) e.id = line.slice(4);
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (data !== undefined) this.events.push({ ...e, data: JSON.parse(data) } as Event);
    }
  }

  get status(): number {
    return this.res?.statusCode ?? 0;
  }

  /** The value of the last answer read for a series path. */
  lastValue(path: string): number | undefined {
    const e = this.events.filter((x) => x.event === 'answer' && x.data.path === path).at(-1);
    return e?.data.body.data[0].value as number | undefined;
  }

  pause(): void {
    this.res!.pause();
  }

  resume(): void {
    this.res!.resume();
  }

  close(): void {
    this.req?.destroy();
  }
}

describe('GET /watch: a client that stops reading', () => {
  const vendor = new ScriptedVendor();
  const watcher = testConsumer({ id: 'slow-watcher' });
  const gw = withGateway({
    upstreams: { macro: { fake: vendor, token: 'sbx_test_macro_watch_slow_vendor' } },
    consumers: [watcher],
    env: {
      ATRIUM_CACHE_TTL_OVERRIDES: `series=${TTL_MS}ms`,
      ATRIUM_WATCH_MIN_INTERVAL_MS: '50',
      ATRIUM_WATCH_HEARTBEAT_MS: '200',
    },
  });
  const clients: PausableClient[] = [];
  const metric = async (name: string): Promise<number> => {
    const line = (await gw.request('/metrics')).text.split('\n').find((l) => l.startsWith(`${name} `));
    return Number(line?.split(' ').pop() ?? NaN);
  };
  const paths = (ids: number[]) => ids.map((id) => `/macro/series/${id}/data`);
  const open = async (ids: number[], headers: Record<string, string> = {}) => {
    const c = await PausableClient.open(
      `${gw.url}/watch?${paths(ids)
        .map((p) => `path=${enc(p)}`)
        .join('&')}`,
      { authorization: `Bearer ${watcher.key}`, ...headers },
    );
    clients.push(c);
    expect(c.status).toBe(200);
    return c;
  };
  /**
   * Changes every path's answer once per round and waits for a poll of each to read it, until `done` says
   * so; returns the rounds and the most the replica held for its watch streams (sampled each round).
   */
  const churn = async (ids: number[], done: () => Promise<boolean>) => {
    let round = 0;
    let maxBuffered = 0;
    while (!(await done())) {
      round++;
      if (round > 200) throw new Error('the replica never fell behind the paused client');
      const before = ids.map((id) => vendor.callsTo(`/series/${id}/data`));
      for (const id of ids) vendor.set(`/series/${id}/data`, round);
      await eventually(() => ids.every((id, i) => vendor.callsTo(`/series/${id}/data`) > before[i]), {
        what: `round ${round} polled`,
      });
      maxBuffered = Math.max(maxBuffered, await metric('atrium_watch_buffered_bytes'));
    }
    return { rounds: round, maxBuffered };
  };

  beforeEach(() => {
    for (const id of [1, 2, 3, 4, 5, 6]) {
      vendor.pad(`/series/${id}/data`, PAD);
      vendor.set(`/series/${id}/data`, 0);
    }
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await eventually(async () => (await metric('atrium_watch_streams')) === 0, { what: 'streams closed' });
  });

  it('holds only the latest answer per path while the client does not read, and delivers it when it reads again', async () => {
    const ids = [1, 2];
    const c = await open(ids);
    await eventually(() => c.events.filter((e) => e.event === 'answer').length === 2, {
      what: 'the first answers',
    });
    c.pause();
    const coalesced0 = await metric('atrium_watch_coalesced_total');
    const { rounds, maxBuffered } = await churn(
      ids,
      async () => (await metric('atrium_watch_coalesced_total')) - coalesced0 >= 20,
    );
    const eventBytes = PAD + 500;
    const changedBytes = rounds * ids.length * eventBytes;
    process.stderr.write(
      `[watch figures] slow reader: ${rounds} rounds × ${ids.length} paths of ~${eventBytes} B changed ` +
        `(${changedBytes} B) while it did not read; the replica held at most ${maxBuffered} B\n`,
    );
    // What the stream's own buffers hold (16 KB marks, one event each way at most): not the backlog.
    expect(maxBuffered).toBeLessThanOrEqual(2 * eventBytes + 64 * 1024);

    // Reading again: the latest answer of every path arrives, and the stream goes on.
    c.resume();
    await eventually(() => ids.every((id) => c.lastValue(`/macro/series/${id}/data`) === rounds), {
      what: 'the latest answers',
    });
    expect(c.ended).toBe(false);
    // What was held is gone once written.
    await eventually(async () => (await metric('atrium_watch_buffered_bytes')) < 64 * 1024, {
      what: 'the buffers emptied',
    });
    // The last id names both latest ETags: a reconnect with it has nothing to send but `unchanged`.
    const lastId = c.events.filter((e) => e.id !== undefined).at(-1)!.id!;
    c.close();
    const again = await SseClient.open(
      `${gw.url}/watch?${paths(ids)
        .map((p) => `path=${enc(p)}`)
        .join('&')}`,
      { authorization: `Bearer ${watcher.key}`, 'last-event-id': lastId },
    );
    try {
      const first = await again.nth(1);
      const second = await again.nth(2);
      expect([first.event, second.event]).toEqual(['unchanged', 'unchanged']);
    } finally {
      again.close();
    }
  });

  it('a client that drops while behind reconnects with its last id and gets the latest answers; nothing stays held', async () => {
    const ids = [3, 4, 5, 6];
    const c = await open(ids);
    await eventually(() => c.events.filter((e) => e.event === 'answer').length === 4, {
      what: 'the first answers',
    });
    c.pause();
    const coalesced0 = await metric('atrium_watch_coalesced_total');
    const { rounds, maxBuffered } = await churn(
      ids,
      async () => (await metric('atrium_watch_coalesced_total')) - coalesced0 >= 8,
    );
    process.stderr.write(
      `[watch figures] slow reader, ${ids.length} paths of ~${PAD} B: behind after ${rounds} rounds, ` +
        `held at most ${maxBuffered} B\n`,
    );
    expect(maxBuffered).toBeLessThanOrEqual(2 * (PAD + 500) + 64 * 1024);
    // The client never read past its first answers, and drops.
    const lastId = c.events.filter((e) => e.id !== undefined).at(-1)!.id!;
    c.close();
    await eventually(async () => (await metric('atrium_watch_streams')) === 0, { what: 'the stream closed' });
    expect(await metric('atrium_watch_buffered_bytes')).toBe(0);
    const again = await open(ids, { 'last-event-id': lastId });
    await eventually(() => ids.every((id) => again.lastValue(`/macro/series/${id}/data`) === rounds), {
      what: 'the latest answers after the reconnect',
    });
    // Only the latest: one answer per path, no `unchanged` (every path changed meanwhile).
    expect(again.events.map((e) => e.event)).toEqual(['answer', 'answer', 'answer', 'answer']);
  });
});
