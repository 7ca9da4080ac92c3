import { GatewayError, isGatewayError } from '../../src/core/errors/gateway-error.js';

describe('GatewayError.expected (high-rate rejections without a stack trace)', () => {
  it('is the same error as the constructor builds, minus the captured stack', () => {
    const details = {
      upstream: 'macro',
      upstreamCode: 'CIRCUIT_OPEN',
      retryAfterSeconds: 7,
      message: 'The macro service is failing.',
    };
    const fast = GatewayError.expected('UPSTREAM_UNAVAILABLE', details);
    const full = new GatewayError('UPSTREAM_UNAVAILABLE', details);
    expect(fast).toBeInstanceOf(GatewayError);
    expect(fast).toBeInstanceOf(Error);
    expect(isGatewayError(fast)).toBe(true);
    for (const k of [
      'name',
      'message',
      'code',
      'status',
      'retryable',
      'upstream',
      'upstreamStatus',
      'upstreamCode',
      'retryAfterSeconds',
      'parameter',
      'fromUpstream',
    ] as const)
      expect(fast[k]).toEqual(full[k]);
    expect(Object.keys(fast).sort()).toEqual(Object.keys(full).sort());
    // The constructor's stack has frames; the expected one only its fixed line.
    expect(full.stack).toMatch(/\n\s+at /);
    expect(fast.stack).not.toMatch(/\n\s+at /);
    expect(fast.stack).toContain('The macro service is failing.');
    expect(String(fast)).toBe('GatewayError: The macro service is failing.');
  });

  it('defaults the message from the code table', () => {
    const e = GatewayError.expected('CONSUMER_RATE_LIMITED');
    expect(e.status).toBe(429);
    expect(e.message).toBe(new GatewayError('CONSUMER_RATE_LIMITED').message);
    expect(e.fromUpstream).toBe(false);
  });

  it('does not touch Error.stackTraceLimit', () => {
    const before = Error.stackTraceLimit;
    GatewayError.expected('UPSTREAM_RATE_LIMITED');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('x').stack).toMatch(/\n\s+at /);
  });
});
