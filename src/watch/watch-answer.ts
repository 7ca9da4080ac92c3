import { createHash } from 'node:crypto';
import { decodeBody } from '../batch/batch.service.js';

/** A resource's current answer, ready to send: its ETag and the JSON members every event of it carries. */
export interface WatchAnswer {
  /** Strong validator: a hash of the answer's bytes (a view's own ETag, which leaves out its timings). */
  readonly etag: string;
  /** `"etag":…,"status":200,"bodyEncoding":…,"body":…`: built once per change, not once per subscriber. */
  readonly members: string;
}

/**
 * A strong ETag over bytes. (h32web adds ETags to proxied GETs; the lead unifies the two: this one is the
 * watch's own so it does not wait on that branch.)
 */
export function strongEtag(bytes: Buffer | string): string {
  return `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 32)}"`;
}

/** An answer of status 200 as the events carry it: JSON parsed (so the event is one line), text, or base64. */
export function watchAnswer(
  body: Buffer,
  contentType: string | undefined,
  etag = strongEtag(body),
): WatchAnswer {
  const decoded = decodeBody(body, contentType);
  const members =
    `"etag":${JSON.stringify(etag)},"status":200` +
    (decoded.bodyEncoding
      ? `,"bodyEncoding":"${decoded.bodyEncoding}","body":${JSON.stringify(decoded.body)}`
      : '');
  return { etag, members };
}

/** One Server-Sent Event; `data` is one line of JSON (JSON.stringify never writes a raw newline). */
export function sseEvent(event: string, data: string, id?: string): string {
  return `event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${data}\n\n`;
}
