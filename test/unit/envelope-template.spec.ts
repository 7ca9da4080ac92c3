import { buildEnvelope, type ErrorEnvelope } from '../../src/core/errors/error-envelope.js';
import type { ErrorShapeExtension } from '../../src/core/errors/error-shape.registry.js';
import { EnvelopeTemplates } from '../../src/core/errors/envelope-template.js';
import { GatewayError, isSharedError } from '../../src/core/errors/gateway-error.js';
import { SecretRedactor } from '../../src/core/logging/secret-redactor.js';
import { RefusalMemo, coolingDownError } from '../../src/proxy/limits/limiter-errors.js';

/** The envelope the exception filter builds for one request (its envelopeOf), scrubbing with `redactor`. */
const envelopeOf =
  (redactor: SecretRedactor) =>
  (
    err: GatewayError,
    requestId: string,
    traceId: string | undefined,
    ext: ErrorShapeExtension | undefined,
  ): ErrorEnvelope => {
    const envelope = buildEnvelope(err, requestId, traceId);
    envelope.error.message = redactor.redact(envelope.error.message);
    if (ext) Object.assign(envelope, ext.extend(err));
    return envelope;
  };

/** What the filter sends without a template. */
function direct(
  redactor: SecretRedactor,
  err: GatewayError,
  ext: ErrorShapeExtension | undefined,
  requestId: string,
  traceId: string | undefined,
): string {
  return JSON.stringify(envelopeOf(redactor)(err, requestId, traceId, ext));
}

/** Templates over the filter's way of building an envelope. */
function templatesOf(redactor: SecretRedactor): EnvelopeTemplates {
  return new EnvelopeTemplates(envelopeOf(redactor), () => redactor.generation);
}

const emisLike = (redactor: SecretRedactor): ErrorShapeExtension => ({
  prefixes: ['deals'],
  extend: (err) => ({ errors: [{ code: err.code, detail: redactor.redact(err.message) }] }),
});

describe('EnvelopeTemplates (a shared refusal serialised once)', () => {
  const errors = [
    coolingDownError('macro', 'the macroeconomic data service', 2500),
    GatewayError.shared('UPSTREAM_UNAVAILABLE', {
      upstream: 'deals',
      upstreamCode: 'CIRCUIT_OPEN',
      retryAfterSeconds: 30,
      message: 'The deal service is failing; "quotes" and \\ backslashes \u2028 stay escaped.',
    }),
    GatewayError.shared('CONSUMER_RATE_LIMITED'),
  ];
  const ids = ['req-1', 'a"b\\c', '\u0001requestId\u0001', 'ünïcode-id'];
  const traces: (string | undefined)[] = [undefined, '4bf92f3577b34da6a3ce929d0e0e4736'];

  it('writes byte for byte what the filter builds per request, with and without a trace and a vendor shape', () => {
    const redactor = new SecretRedactor();
    const templates = templatesOf(redactor);
    for (const err of errors)
      for (const ext of [undefined, emisLike(redactor)])
        for (const id of ids)
          for (const trace of traces) {
            const got = templates.json(err, ext, id, trace);
            expect(got).toBe(direct(redactor, err, ext, id, trace));
            expect(JSON.parse(got!).error.requestId).toBe(id);
          }
  });

  it('scrubs the message, and builds again when a secret is registered later', () => {
    const redactor = new SecretRedactor();
    const templates = templatesOf(redactor);
    const err = GatewayError.shared('UPSTREAM_UNAVAILABLE', { message: 'vendor said s3cr3t-token-xyz' });
    expect(templates.json(err, undefined, 'r1', undefined)).toContain('s3cr3t-token-xyz');
    redactor.register('s3cr3t-token-xyz');
    const after = templates.json(err, undefined, 'r2', undefined)!;
    expect(after).not.toContain('s3cr3t-token-xyz');
    expect(after).toBe(direct(redactor, err, undefined, 'r2', undefined));
  });

  it('builds again when the message was changed after the first use', () => {
    const redactor = new SecretRedactor();
    const templates = templatesOf(redactor);
    const err = GatewayError.shared('UPSTREAM_UNAVAILABLE', { message: 'first' });
    expect(JSON.parse(templates.json(err, undefined, 'r', undefined)!).error.message).toBe('first');
    Object.defineProperty(err, 'message', { value: 'second' });
    expect(JSON.parse(templates.json(err, undefined, 'r', undefined)!).error.message).toBe('second');
  });

  it('declines a vendor shape that replaces the error object (the filter then builds it per request)', () => {
    const redactor = new SecretRedactor();
    const templates = templatesOf(redactor);
    const replacing: ErrorShapeExtension = { prefixes: ['x'], extend: () => ({ error: 'flat' }) };
    expect(templates.json(GatewayError.shared('INTERNAL'), replacing, 'r', undefined)).toBeUndefined();
  });
});

describe('RefusalMemo (one refusal per whole second of Retry-After)', () => {
  it('hands out the same shared error within a second and a new one when the seconds change', () => {
    const memo = new RefusalMemo((ms) => coolingDownError('macro', 'the macro service', ms));
    const a = memo.at(2900);
    expect(memo.at(2001)).toBe(a);
    expect(a.retryAfterSeconds).toBe(3);
    expect(isSharedError(a)).toBe(true);
    const b = memo.at(2000);
    expect(b).not.toBe(a);
    expect(b.retryAfterSeconds).toBe(2);
    expect(b.message).toContain('retry in 2 s');
    expect(isSharedError(new GatewayError('UPSTREAM_RATE_LIMITED'))).toBe(false);
    expect(isSharedError(GatewayError.expected('UPSTREAM_RATE_LIMITED'))).toBe(false);
  });
});
