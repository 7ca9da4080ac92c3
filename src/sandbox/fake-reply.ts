// What a fake handler answers and how it goes on the wire: JSON (or XML), raw bytes or a stream.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { XMLBuilder } from 'fast-xml-parser';
import { isRecord } from './fake-behaviour.js';

interface FakeReplyBase {
  status?: number;
  headers?: Record<string, string>;
}

/** A handler's answer: a JSON value (optionally serialised as XML), raw bytes, or a stream. */
export type FakeReply =
  | (FakeReplyBase & { json: unknown; xml?: boolean })
  | (FakeReplyBase & { text: string | Buffer })
  | (FakeReplyBase & { stream: Readable; length?: number });

const xmlBuilder = new XMLBuilder({});

/** Serialises a JSON value as XML under a `<response>` root (arrays become repeated elements). */
export function toXml(value: unknown): string {
  const root = Array.isArray(value) ? { item: value } : value;
  return `<?xml version="1.0" encoding="UTF-8"?>${xmlBuilder.build({ response: root })}`;
}

export function lowerKeys(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = v;
  return out;
}

export function sniffContentType(text: string): string {
  const t = text.trimStart();
  if (t.startsWith('{') || t.startsWith('[')) return 'application/json';
  if (t.startsWith('<?xml')) return 'application/xml';
  if (t.startsWith('<')) return 'text/html';
  return 'text/plain';
}

/** JSON as JavaScript writes it. */
export function plainJson(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/**
 * JSON as PHP's `json_encode` writes it with its default flags (the EMIS stacks): `/` as `\/` and every
 * character beyond ASCII as `\uXXXX` (UTF-16 units). Both occur only inside strings, so the text is
 * rewritten as a whole.
 */
export function phpJson(value: unknown): string {
  return plainJson(value)
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Writes a reply, unless the client has gone or the headers are out already. */
export function writeReply(
  res: ServerResponse,
  reply: FakeReply,
  json: (value: unknown) => string = plainJson,
): void {
  if (res.destroyed || res.headersSent) return;
  const status = reply.status ?? 200;
  const headers = lowerKeys(reply.headers);
  if ('json' in reply) {
    const text = reply.xml ? toXml(reply.json) : json(reply.json);
    headers['content-type'] ??= reply.xml
      ? 'application/xml; charset=utf-8'
      : 'application/json; charset=utf-8';
    headers['content-length'] = String(Buffer.byteLength(text));
    res.writeHead(status, headers);
    res.end(text);
  } else if ('text' in reply) {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    headers['content-length'] = String(Buffer.byteLength(reply.text));
    res.writeHead(status, headers);
    res.end(reply.text);
  } else {
    headers['content-type'] ??= 'application/octet-stream';
    if (reply.length !== undefined) headers['content-length'] = String(reply.length);
    res.writeHead(status, headers);
    // A client that goes away mid-file ends the pipeline with an error; nothing to report.
    pipeline(reply.stream, res).catch(() => undefined);
  }
}

/** Adds the received credential to a JSON success body, so tests can check the gateway scrubs it. */
export function withEcho(reply: FakeReply, credential: string): FakeReply {
  const status = reply.status ?? 200;
  if (!('json' in reply) || status >= 300 || !isRecord(reply.json)) return reply;
  return {
    ...reply,
    json: {
      ...reply.json,
      echoedCredential: credential,
      echoedNote: `request carried credential ${credential}`,
    },
  };
}
