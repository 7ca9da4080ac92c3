import { parseRetryAfterSeconds, parseRetryAfterValue } from '../../src/core/http/retry-after.js';

describe('Retry-After parsing', () => {
  const now = Date.parse('2026-11-23T10:00:00Z');

  it('reads delta seconds', () => {
    expect(parseRetryAfterValue('5', now)).toBe(5);
    expect(parseRetryAfterValue('0', now)).toBe(1);
    expect(parseRetryAfterValue('1.2', now)).toBe(2);
  });

  it('reads an HTTP date', () => {
    expect(parseRetryAfterValue('Mon, 23 Nov 2026 10:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfterValue('Mon, 23 Nov 2026 09:00:00 GMT', now)).toBe(1);
  });

  it('rejects garbage', () => {
    expect(parseRetryAfterValue('soon', now)).toBeUndefined();
    expect(parseRetryAfterValue('-5', now)).toBeUndefined();
    expect(parseRetryAfterValue('', now)).toBeUndefined();
  });

  it('falls back to RateLimit-Reset / X-RateLimit-Reset (delta, epoch s, epoch ms)', () => {
    expect(parseRetryAfterSeconds({ 'ratelimit-reset': '7' }, now)).toBe(7);
    expect(parseRetryAfterSeconds({ 'x-ratelimit-reset': String(now / 1000 + 12) }, now)).toBe(12);
    expect(parseRetryAfterSeconds({ 'x-ratelimit-reset': String(now + 3000) }, now)).toBe(3);
    expect(parseRetryAfterSeconds({ 'retry-after': 'junk', 'x-ratelimit-reset': '4' }, now)).toBe(4);
    expect(parseRetryAfterSeconds({}, now)).toBeUndefined();
  });

  it('caps absurd waits at a day', () => {
    expect(parseRetryAfterValue('99999999', now)).toBe(86_400);
  });
});
