import type { IncomingHttpHeaders } from 'node:http';
import { CONSUMER_KEY_HEADERS, isConsumerKeyParam } from '../core/auth/consumer.js';
import type { GatewaySecretShapes } from '../core/auth/gateway-key-shape.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { lenientPercentDecode } from '../core/http/param-name.js';
import { writeBodyKind } from '../core/http/write-body.js';

/** What a consumer sent that the gateway would forward: path parameters, query, headers, write body. */
export interface ForwardedInput {
  readonly params: Readonly<Record<string, unknown>>;
  readonly query: readonly (readonly [string, string])[];
  readonly headers: IncomingHttpHeaders;
  readonly body?: Buffer;
}

const KEY_HEADERS: ReadonlySet<string> = new Set(CONSUMER_KEY_HEADERS);
/** Deep enough for any real write body; deeper JSON is walked no further (and was refused by its size). */
const MAX_DEPTH = 64;

function refuse(field: string): never {
  throw new GatewayError('VALIDATION_FAILED', {
    parameter: field,
    message:
      `${field} holds a value shaped like a gateway key or token; it is never sent to a vendor. ` +
      'Send your key only in Authorization or X-API-Key.',
  });
}

/** The first JSON member (name or string value, any depth) holding a gateway secret, by its path. */
function jsonField(
  value: unknown,
  path: string,
  shapes: GatewaySecretShapes,
  depth: number,
): string | undefined {
  if (typeof value === 'string') return shapes.holds(value) ? path : undefined;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const f = jsonField(value[i], `${path}[${i}]`, shapes, depth + 1);
      if (f) return f;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const at = `${path}.${shapes.printable(k)}`;
    if (shapes.holds(k)) return at;
    const f = jsonField(v, at, shapes, depth + 1);
    if (f) return f;
  }
  return undefined;
}

function formField(body: Buffer, shapes: GatewaySecretShapes): string | undefined {
  for (const pair of body.toString('utf8').split(/[&;]/)) {
    const eq = pair.indexOf('=');
    const read = (s: string) => lenientPercentDecode(s.replace(/\+/g, ' '));
    const name = read(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : read(pair.slice(eq + 1));
    if (shapes.holds(name) || shapes.holds(value)) return `body.${shapes.printable(name)}`;
  }
  return undefined;
}

/**
 * Key custody on the way in: a value shaped like a gateway key, or holding an operator or metrics token,
 * is refused with 400 naming where it was (never the value) before anything is forwarded, cached or
 * coalesced, wherever it sits: a path parameter, a query parameter, a header, a write body's field at any
 * depth, or a field's name. Only the positions the gateway reads a consumer key from are exempt: the key
 * headers and the `token`/`sessionId` parameters, which the credentials stage strips anyway.
 */
export function refuseGatewaySecrets(input: ForwardedInput, shapes: GatewaySecretShapes): void {
  for (const name in input.params) {
    const v = input.params[name];
    if (typeof v === 'string' && shapes.holds(v)) refuse(name);
  }
  for (const [k, v] of input.query) {
    if (isConsumerKeyParam(k)) continue;
    if (shapes.holds(k) || shapes.holds(v)) refuse(shapes.printable(k));
  }
  for (const name in input.headers) {
    if (KEY_HEADERS.has(name)) continue;
    const v = input.headers[name];
    const text = Array.isArray(v) ? v.join(', ') : v;
    if (text !== undefined && shapes.holds(text)) refuse(name);
  }
  const body = input.body;
  if (!body || body.length === 0) return;
  const kind = writeBodyKind(
    Array.isArray(input.headers['content-type']) ? undefined : input.headers['content-type'],
  );
  let field: string | undefined;
  if (kind === 'json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return; // refused by the write-body check before anything is forwarded
    }
    field = jsonField(parsed, 'body', shapes, 0);
  } else if (kind === 'form') field = formField(body, shapes);
  else if (shapes.holds(body.toString('latin1'))) field = 'body';
  if (field) refuse(field);
}
