// Small HTTP helper for the sandbox tests: real requests over loopback with undici.
import { type Dispatcher, request } from 'undici';
import { eventually } from '../helpers/eventually.js';

export interface CallResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  buf: Buffer;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary bodies
}

export async function call(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    dispatcher?: Dispatcher;
  } = {},
): Promise<CallResult> {
  const res = await request(url, {
    method: (opts.method ?? 'GET') as 'GET',
    headers: opts.headers,
    body: opts.body,
    dispatcher: opts.dispatcher,
  });
  const buf = Buffer.from(await res.body.arrayBuffer());
  const text = buf.toString('utf8');
  let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- as above
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, buf, text, json };
}

/** A form-encoded body with its content type. */
export function form(fields: Record<string, string>): { body: string; headers: Record<string, string> } {
  return {
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  };
}

export function jsonBody(value: unknown): { body: string; headers: Record<string, string> } {
  return { body: JSON.stringify(value), headers: { 'content-type': 'application/json' } };
}

/** The shared eventually() (test/helpers/eventually.ts, its generous ceiling) with a short step. */
export async function waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void> {
  await eventually(predicate, { timeoutMs, intervalMs: 5 });
}

/** A settable clock for rate-limit windows and sessions. */
export function manualClock(start = Date.UTC(2025, 0, 1)): {
  now: () => number;
  advance: (ms: number) => void;
} {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}
