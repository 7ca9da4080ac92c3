// The HTTP control API of a fake (`/__fake/…`): what tests and benchmarks in other processes use to read
// recorded requests and script behaviour.
import { parseBehaviour } from './fake-behaviour.js';
import type { FakeReply } from './fake-reply.js';
import type { FakeUpstream } from './fake-upstream.js';
import type { RecordedRequest } from './fake-upstream.types.js';

/** The answer of a generic control endpoint; undefined = not one of them (the vendor's extras may be). */
export function genericControl(
  fake: FakeUpstream,
  method: string,
  name: string,
  query: URLSearchParams,
  body: Buffer,
): FakeReply | undefined {
  const route = `${method} ${name}`;
  if (route === 'GET requests') return { json: fake.requests.map(serializeRecorded) };
  if (route === 'GET calls') return { json: { calls: fake.calls(query.get('prefix') ?? undefined) } };
  if (route === 'GET behaviour') return { json: fake.behaviour };
  if (route === 'GET info') {
    return { json: { kind: fake.kind, url: fake.url, basePath: fake.basePath, controlUrl: fake.controlUrl } };
  }
  if (route === 'POST reset') {
    fake.reset();
    return { json: { ok: true } };
  }
  if (route === 'POST behave') {
    try {
      const text = body.toString('utf8').trim();
      fake.behave(parseBehaviour(text === '' ? {} : JSON.parse(text)));
      return { json: fake.behaviour };
    } catch (err) {
      return { status: 400, json: { error: err instanceof Error ? err.message : 'invalid behaviour' } };
    }
  }
  return undefined;
}

/** The JSON form of a recorded request served by GET /__fake/requests. */
export function serializeRecorded(r: RecordedRequest): Record<string, unknown> {
  const utf8 = r.body.toString('utf8');
  const isText = Buffer.from(utf8, 'utf8').equals(r.body);
  return {
    method: r.method,
    url: r.url,
    path: r.path,
    query: r.query,
    headers: r.headers,
    body: isText ? utf8 : r.body.toString('base64'),
    bodyEncoding: isText ? 'utf8' : 'base64',
    at: r.at,
  };
}
