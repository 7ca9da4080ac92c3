// `watch()`: a page follows gateway paths (series, views) as they change, over `GET /watch` (Server-Sent
// Events). Hand-written and dependency-free. It reads the stream with fetch rather than
// EventSource so the key goes in a header, never in the URL; it reconnects with Last-Event-ID by itself.
import { AtriumError, type AtriumClientOptions, type AtriumErrorBody } from './runtime.js';

/** A path's answer: sent first, then each time it changes (its ETag is new). */
export interface WatchAnswer<T = unknown> {
  /** The path as you asked for it. */
  readonly path: string;
  readonly etag: string;
  readonly body: T;
}

export interface WatchHandlers {
  /** A path's current answer, or a new one. */
  onAnswer(answer: WatchAnswer): void;
  /** A path the gateway refused (permission, unknown, not watchable): it is not watched. */
  onRefused?(path: string, error: AtriumErrorBody): void;
  /** A path whose first read failed at the data service: it stays watched, and its answer follows. */
  onRetrying?(path: string, error: AtriumErrorBody): void;
  /** The stream dropped; `watch` reconnects after `retryMs` and resumes where it was. */
  onDisconnect?(reason: unknown): void;
  /** The gateway refused the whole watch (a cap, a bad key): no reconnect. */
  onFatal?(error: AtriumError): void;
}

export interface WatchOptions {
  readonly signal?: AbortSignal;
  /** Wait before reconnecting (the gateway's `retry:` field overrides it). Default 2000 ms. */
  readonly retryMs?: number;
}

export interface Watching {
  /** The id of the last event: the ETags the page has (what a reconnect sends as Last-Event-ID). */
  readonly lastEventId: string | undefined;
  close(): void;
}

interface RawEvent {
  event: string;
  id?: string;
  data: string;
}

/** Splits a text/event-stream into events (comments and heartbeats dropped). */
async function* events(body: ReadableStream<Uint8Array>): AsyncGenerator<RawEvent | { retry: number }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buf.indexOf('\n\n')) !== -1) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const e: RawEvent = { event: 'message', data: '' };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue;
        const at = line.indexOf(':');
        const name = at === -1 ? line : line.slice(0, at);
        const v = at === -1 ? '' : line.slice(at + 1).replace(/^ /, '');
        if (name === 'event') e.event = v;
        else if (name === 'id') e.id = v;
        else if (name === 'data') data.push(v);
        else if (name === 'retry' && /^\d+$/.test(v)) yield { retry: Number(v) };
      }
      if (data.length) yield { ...e, data: data.join('\n') };
    }
  }
}

/**
 * Watches gateway paths (`/macro/series/1/data`, `/views/company-overview?id=…&fields=…`): `onAnswer` gets
 * each path's current answer, then every new one. After a dropped connection it reconnects with the ETags it
 * has, and gets only what changed meanwhile. Call `close()` (or abort `signal`) to stop.
 */
export function watch(
  client: AtriumClientOptions,
  paths: readonly string[],
  handlers: WatchHandlers,
  options: WatchOptions = {},
): Watching {
  const stop = new AbortController();
  options.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  const f = (client.fetch ?? globalThis.fetch).bind(globalThis);
  const url =
    client.baseUrl.replace(/\/+$/, '') +
    '/watch?' +
    paths.map((p) => `path=${encodeURIComponent(p)}`).join('&');
  let lastEventId: string | undefined;
  let retryMs = options.retryMs ?? 2000;

  const once = async (): Promise<'again' | 'done'> => {
    const headers: Record<string, string> = { ...client.headers, accept: 'text/event-stream' };
    const key = typeof client.apiKey === 'function' ? await client.apiKey() : client.apiKey;
    if (key) headers.authorization = `Bearer ${key}`;
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const res = await f(url, { headers, signal: stop.signal });
    if (!res.ok || !res.body) {
      const text = await res.text();
      let envelope: AtriumErrorBody | undefined;
      try {
        envelope = (JSON.parse(text) as { error?: AtriumErrorBody }).error;
      } catch {
        envelope = undefined;
      }
      const err = new AtriumError(res.status, envelope, `HTTP ${res.status}`);
      // A full replica (503) is worth another try; any other refusal is final.
      if (res.status === 503) {
        handlers.onDisconnect?.(err);
        return 'again';
      }
      handlers.onFatal?.(err);
      return 'done';
    }
    let answered = false;
    for await (const e of events(res.body)) {
      if ('retry' in e) {
        retryMs = e.retry;
        continue;
      }
      if (e.id !== undefined) lastEventId = e.id;
      const data = JSON.parse(e.data) as {
        path: string;
        etag?: string;
        body?: unknown;
        error?: AtriumErrorBody;
        retrying?: boolean;
      };
      if (e.event === 'error' && data.error && data.retrying) {
        answered = true;
        handlers.onRetrying?.(data.path, data.error);
      } else if (e.event === 'error' && data.error) handlers.onRefused?.(data.path, data.error);
      else if (e.event === 'answer') {
        answered = true;
        handlers.onAnswer({ path: data.path, etag: data.etag!, body: data.body });
      } else if (e.event === 'unchanged') answered = true;
    }
    // The gateway ends a stream with nothing left to watch (every path refused): no reconnect then.
    return answered ? 'again' : 'done';
  };

  void (async () => {
    while (!stop.signal.aborted) {
      let next: 'again' | 'done';
      try {
        next = await once();
      } catch (e) {
        if (stop.signal.aborted) return;
        handlers.onDisconnect?.(e);
        next = 'again';
      }
      if (next === 'done' || stop.signal.aborted) return;
      await new Promise((r) => setTimeout(r, retryMs));
    }
  })();

  return {
    get lastEventId() {
      return lastEventId;
    },
    close: () => stop.abort(),
  };
}
