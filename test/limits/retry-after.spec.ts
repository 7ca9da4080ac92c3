import {
  RETRY_AFTER_CEILING_SECONDS,
  parseResetValue,
  parseRetryAfterSeconds,
  parseRetryAfterValue,
} from '../../src/core/http/retry-after.js';

describe('Retry-After / RateLimit-Reset parsing (what the cooldown trusts)', () => {
  const now = Date.parse('2026-11-23T10:00:00Z');

  describe('delta seconds', () => {
    it.each([
      ['5', 5],
      ['  30 ', 30],
      ['0', 1],
      ['1.2', 2],
      ['120', 120],
    ])('%j → %d', (v, s) => expect(parseRetryAfterValue(v, now)).toBe(s));
  });

  describe('HTTP dates (all three forms of RFC 9110)', () => {
    it.each([
      ['Mon, 23 Nov 2026 10:00:30 GMT', 30],
      ['Monday, 23-Nov-26 10:01:00 GMT', 60],
      ['Mon Nov 23 10:00:05 2026', 5],
      ['Mon Nov  1 10:00:05 2026', 1], // in the past → at least 1
      ['Mon, 23 Nov 2026 09:00:00 GMT', 1],
      ['mon, 23 nov 2026 10:00:10 gmt', 10],
    ])('%j → %d', (v, s) => expect(parseRetryAfterValue(v, now)).toBe(s));

    it('a date from the fake upstream (toUTCString) round-trips', () => {
      expect(parseRetryAfterValue(new Date(now + 7000).toUTCString(), now)).toBe(7);
    });
  });

  describe('garbage', () => {
    it.each([
      'soon',
      'soon 2', // Date.parse reads this as a date in 2001
      'garbage 2026-11-23', // … and this one as a date in the future
      '-5',
      '5s',
      '1e3',
      '',
      '   ',
      'Mon, 32 Nov 2026 10:00:00 GMT',
      'Mon, 23 Nov 2026 10:00:00 PST',
      'NaN',
    ])('%j → undefined', (v) => expect(parseRetryAfterValue(v, now)).toBeUndefined());
  });

  describe('reset headers', () => {
    it('small numbers are deltas, large ones epoch seconds or milliseconds', () => {
      expect(parseResetValue('7', now)).toBe(7);
      expect(parseResetValue(String(now / 1000 + 12), now)).toBe(12);
      expect(parseResetValue(String(now + 3000), now)).toBe(3);
      expect(parseResetValue(String(now / 1000 - 50), now)).toBe(1);
      expect(parseResetValue('later', now)).toBeUndefined();
    });

    it('Retry-After wins; garbage there falls back to the reset headers', () => {
      expect(parseRetryAfterSeconds({ 'retry-after': '3', 'x-ratelimit-reset': '9' }, now)).toBe(3);
      expect(parseRetryAfterSeconds({ 'retry-after': 'junk', 'ratelimit-reset': '4' }, now)).toBe(4);
      expect(parseRetryAfterSeconds({ 'x-rate-limit-reset': '6' }, now)).toBe(6);
      expect(parseRetryAfterSeconds({ 'retry-after': ['8', '9'] }, now)).toBe(8);
    });

    it('no usable header → undefined (the limits then apply the configured default)', () => {
      expect(parseRetryAfterSeconds({}, now)).toBeUndefined();
      expect(
        parseRetryAfterSeconds({ 'retry-after': 'soon', 'x-ratelimit-reset': 'x' }, now),
      ).toBeUndefined();
    });

    it('caps absurd waits at a day (the limits then apply the configured maximum)', () => {
      expect(parseRetryAfterValue('99999999', now)).toBe(RETRY_AFTER_CEILING_SECONDS);
      expect(parseRetryAfterValue('Mon, 23 Nov 2099 10:00:00 GMT', now)).toBe(86_400);
      // Too many digits for a finite number: still the ceiling, never the 1 s of a past date.
      expect(parseRetryAfterValue('9'.repeat(400), now)).toBe(86_400);
      expect(parseResetValue('999999999', now)).toBe(86_400);
      expect(parseResetValue(String(now / 1000 + 10 * 365 * 86_400), now)).toBe(86_400);
    });

    it('negative or signed values are garbage, not "now"', () => {
      expect(parseResetValue('-5', now)).toBeUndefined();
      expect(parseResetValue('+5', now)).toBeUndefined();
      expect(parseRetryAfterSeconds({ 'retry-after': '-30' }, now)).toBeUndefined();
    });
  });
});
