import { Agent, fetch } from 'undici';
import { eventually } from './eventually.js';

/** One Server-Sent Event as a browser's EventSource would read it. */
export interface SseEvent {
  readonly event: string;
  readonly id?: string;
  readonly data: string;
  /** When the client read it (epoch ms): how long a change took to arrive. */
  readonly at: number;
  json(): any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary bodies
}

/**
 * An SSE client over undici's fetch: reads the body as it streams and parses it into events (the
 * `text/event-stream` framing: `event:`, `id:`, `data:` lines, a blank line ends an event, `:` a comment).
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  comments = 0;
  ended = false;
  status = 0;
  headers: Record<string, string> = {};
  /** The body of a refusal (not a stream). */
  text = '';
  private readonly abort = new AbortController();
  /** Its own connection pool: closing the client closes its sockets (no idle one keeps a server open). */
  private readonly agent = new Agent({ pipelining: 0 });

  static async open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const c = new SseClient();
    const res = await fetch(url, {
      headers: { accept: 'text/event-stream', ...headers },
      signal: c.abort.signal,
      dispatcher: c.agent,
    });
    c.status = res.status;
    res.headers.forEach((v, k) => (c.headers[k] = v));
    if (res.status !== 200 || !res.body) {
      c.text = await res.text();
      c.ended = true;
      c.close();
      return c;
    }
    void c.read(res.body);
    return c;
  }

  private async read(body: AsyncIterable<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of body) {
        buf += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buf.indexOf('\n\n')) !== -1) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          this.take(block);
        }
      }
    } catch {
      // aborted by close()
    }
    this.ended = true;
  }

  private take(block: string): void {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    let fields = 0;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments++;
        continue;
      }
      const at = line.indexOf(':');
      const name = at === -1 ? line : line.slice(0, at);
      const value = at === -1 ? '' : line.slice(at + 1).replace(/^ /, '');
      if (name === 'event') event = value;
      else if (name === 'id') id = value;
      else if (name === 'data') data.push(value);
      else continue;
      fields++;
    }
    if (fields === 0 || data.length === 0) return;
    const text = data.join('\n');
    this.events.push({ event, id, data: text, at: Date.now(), json: () => JSON.parse(text) });
  }

  /** Waits for the `n`th event (1-based) matching `pred`, counting from the stream's start. */
  async nth(n: number, pred: (e: SseEvent) => boolean = () => true, what = 'event'): Promise<SseEvent> {
    return eventually(() => this.events.filter(pred)[n - 1], { what, timeoutMs: 10_000 });
  }

  close(): void {
    this.abort.abort();
    void this.agent.destroy().catch(() => undefined);
  }
}
