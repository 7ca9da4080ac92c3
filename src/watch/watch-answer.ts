import { decodeBody } from '../batch/batch.service.js';
import { etagOf } from '../core/http/etag.js';

/** A resource's current answer, ready to send: its ETag and the JSON members every event of it carries. */
export interface WatchAnswer {
  /** Strong validator: a hash of the answer's bytes (a view's own ETag, which leaves out its timings). */
  readonly etag: string;
  /** `"etag":…,"status":200,"bodyEncoding":…,"body":…`: built once per change, not once per subscriber. */
  readonly members: string;
}

/** An answer of status 200 as the events carry it: JSON parsed (so the event is one line), text, or base64. */
export function watchAnswer(
  body: Buffer,
  contentType: string | undefined,
  // The gateway's one ETag: the same value a GET of the path answers with, so either can be sent back.
  etag = etagOf(body),
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
