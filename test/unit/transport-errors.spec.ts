import {
  TRANSPORT_ERROR_CODES,
  TRANSPORT_FAILURES,
  transportError,
  transportFailureOf,
} from '../../src/proxy/transport/transport-errors.js';

describe('transport-error taxonomy (one table, as fastify-reply-from)', () => {
  it.each([
    ['refused', 503, 'ECONNREFUSED'],
    ['reset', 503, 'ECONNRESET'],
    ['unreachable', 503, 'CONNECTION_FAILED'],
    ['timeout', 504, undefined],
    ['tooLarge', 429, 'RESPONSE_TOO_LARGE'],
    ['badBody', 502, 'INVALID_BODY'],
  ] as const)('%s → %d %s', (failure, status, upstreamCode) => {
    const e = transportError(failure, 'u', 'msg');
    expect(e).toMatchObject({ status, upstreamCode, upstream: 'u', message: 'msg' });
    expect(e.code).toBe(TRANSPORT_FAILURES[failure].code);
  });

  it('classifies library and socket errors by code, anything else as unreachable', () => {
    const err = (code: string) => Object.assign(new Error('x'), { code });
    expect(transportFailureOf(err('ECONNREFUSED'))).toBe('refused');
    expect(transportFailureOf(err('UND_ERR_SOCKET'))).toBe('reset');
    expect(transportFailureOf(err('UND_ERR_HEADERS_TIMEOUT'))).toBe('timeout');
    expect(transportFailureOf(err('UND_ERR_RESPONSE_EXCEEDED_MAX_SIZE'))).toBe('tooLarge');
    expect(transportFailureOf(err('ENOTFOUND'))).toBe('unreachable');
    expect(transportFailureOf(Object.assign(new Error('x'), { name: 'AbortError' }))).toBe('timeout');
    expect(transportFailureOf(undefined)).toBe('unreachable');
    for (const failure of Object.values(TRANSPORT_ERROR_CODES))
      expect(TRANSPORT_FAILURES[failure]).toBeDefined();
  });
});
