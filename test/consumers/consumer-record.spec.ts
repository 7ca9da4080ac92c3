import {
  ConsumersFileError,
  keyIdOf,
  parseConsumer,
  parseConsumersDocument,
  sha256,
  toRecord,
} from '../../src/core/auth/consumer-record.js';

const KNOWN = ['macro', 'company', 'documents', 'deals'];
const H1 = sha256('atr_first_key_for_record_tests').toString('hex');
const H2 = sha256('atr_second_key_for_record_tests').toString('hex');

const message = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConsumersFileError);
    return (e as Error).message;
  }
  throw new Error('did not throw');
};

describe('consumer records (the file, the Redis store and the admin API share this validation)', () => {
  it('reads keyHashes and keys (with ids and dates) into one key list; defaults as before', () => {
    const c = parseConsumer(
      {
        id: 'app',
        keyHashes: [H1],
        keys: [{ id: 'new-key', sha256: H2, expiresAt: '2030-01-01T00:00:00Z' }],
        upstreams: ['macro'],
      },
      0,
      KNOWN,
    );
    expect(c.keyHashes.map((h) => h.toString('hex'))).toEqual([H1, H2]);
    expect(c.keys).toEqual([
      { id: keyIdOf(Buffer.from(H1, 'hex')), hash: Buffer.from(H1, 'hex') },
      { id: 'new-key', hash: Buffer.from(H2, 'hex'), expiresAt: Date.UTC(2030, 0, 1) },
    ]);
    expect(c.enabled).toBeUndefined();
    expect([c.write, c.weight, c.reservedShare, c.limits, c.corsOrigins]).toEqual([false, 1, 0, [], []]);
  });

  it('derives a stable key id from the digest that is neither the key nor its digest', () => {
    const id = keyIdOf(Buffer.from(H1, 'hex'));
    expect(id).toMatch(/^k-[0-9a-f]{10}$/);
    expect(H1).not.toContain(id.slice(2));
    expect(keyIdOf(Buffer.from(H1, 'hex'))).toBe(id);
  });

  it.each([
    [{ id: 'a', upstreams: ['macro'] }, 'needs at least one key'],
    [{ id: 'a', keyHashes: ['nothex'], upstreams: ['macro'] }, 'keyHashes[0]: must be a SHA-256 hex digest'],
    [
      { id: 'a', keys: [{ sha256: H1, expiresAt: 'tomorrow' }], upstreams: ['macro'] },
      'expiresAt: must be an ISO',
    ],
    [
      {
        id: 'a',
        keys: [
          { id: 'x', sha256: H1 },
          { id: 'x', sha256: H2 },
        ],
        upstreams: ['macro'],
      },
      'used twice',
    ],
    [{ id: 'a', keyHashes: [H1], upstreams: ['nope'] }, 'unknown upstream'],
    [{ id: 'a', keyHashes: [H1], upstreams: ['macro'], enabled: 'yes' }, 'enabled must be a boolean'],
    [{ id: 'a', keyHashes: [H1], upstreams: ['macro'], corsOrigins: ['*'] }, 'no wildcard'],
    [
      { id: 'a', keyHashes: [H1], upstreams: ['macro'], corsOrigins: ['app.example'] },
      'not an http(s) origin',
    ],
    [
      {
        id: 'a',
        keyHashes: [H1],
        upstreams: ['macro'],
        limits: [
          { name: 's', ttlMs: 1000, limit: 1 },
          { name: 's', ttlMs: 2000, limit: 1 },
        ],
      },
      'window names must be unique',
    ],
    [{ id: 'a b', keyHashes: [H1], upstreams: ['macro'] }, 'consumers[0].id'],
  ])('refuses %j naming what is wrong', (raw, expected) => {
    const m = message(() => parseConsumer(raw, 0, KNOWN));
    expect(m).toContain(expected);
    expect(m).not.toContain(H1);
  });

  it('refuses a set with a duplicate id or a key shared by two consumers', () => {
    const a = { id: 'a', keyHashes: [H1], upstreams: ['macro'] };
    expect(message(() => parseConsumersDocument({ consumers: [a, a] }, KNOWN))).toContain(
      'duplicate consumer id',
    );
    expect(message(() => parseConsumersDocument({ consumers: [a, { ...a, id: 'b' }] }, KNOWN))).toContain(
      'reuses another key',
    );
  });

  it('round-trips through toRecord (the Redis form) without loss', () => {
    const c = parseConsumer(
      {
        id: 'app',
        keys: [
          {
            id: 'k1',
            sha256: H1,
            createdAt: '2026-01-01T00:00:00.000Z',
            expiresAt: '2026-02-01T00:00:00.000Z',
          },
        ],
        upstreams: ['macro', 'deals'],
        write: true,
        limits: [{ name: 'per-second', ttlMs: 1000, limit: 5 }],
        weight: 2,
        reservedShare: 0.25,
        corsOrigins: ['https://app.example'],
        enabled: false,
      },
      0,
      KNOWN,
    );
    const again = parseConsumer(JSON.parse(JSON.stringify(toRecord(c))), 0, KNOWN);
    expect(again).toEqual(c);
    expect(JSON.stringify(toRecord(c))).not.toMatch(/atr_/);
  });

  describe('the oidc block (end-user tokens)', () => {
    const ISSUER = 'https://login.example.com/realms/staff';
    it('needs no key; fills safe defaults; round-trips through toRecord', () => {
      const c = parseConsumer(
        { id: 'spa', upstreams: ['macro'], oidc: { issuer: ISSUER, audience: 'spa' } },
        0,
        KNOWN,
      );
      expect(c.keys).toEqual([]);
      expect(c.tokens).toEqual({
        issuer: ISSUER,
        audience: ['spa'],
        algorithms: [
          'RS256',
          'RS384',
          'RS512',
          'PS256',
          'PS384',
          'PS512',
          'ES256',
          'ES384',
          'ES512',
          'EdDSA',
          'Ed25519',
        ],
        clockSkewSeconds: 30,
        jwksCooldownMs: 30_000,
        userLimits: [],
      });
      expect(parseConsumer(JSON.parse(JSON.stringify(toRecord(c))), 0, KNOWN)).toEqual(c);
    });

    it.each([
      [{ issuer: ISSUER, audience: 'a', algorithms: ['none'] }, 'algorithms: "none" is not allowed'],
      [{ issuer: ISSUER, audience: 'a', algorithms: ['HS256'] }, 'algorithms: "HS256" is not allowed'],
      [{ issuer: ISSUER, audience: 'a', algorithms: [] }, 'algorithms: must be a non-empty array'],
      [{ issuer: 'http://login.example.com', audience: 'a' }, 'issuer: must be an https URL'],
      [{ issuer: ISSUER, jwksUri: 'ftp://x', audience: 'a' }, 'jwksUri: must be an https URL'],
      [{ issuer: ISSUER }, 'audience: must be a non-empty string or array'],
      [{ issuer: ISSUER, audience: [] }, 'audience: must be a non-empty string or array'],
      [{ issuer: ISSUER, audience: 'a', clockSkewSeconds: -1 }, 'clockSkewSeconds: must be an integer'],
      [{ issuer: ISSUER, audience: 'a', jwksCooldownMs: 1.5 }, 'jwksCooldownMs: must be a non-negative'],
      [{ issuer: ISSUER, audience: 'a', secret: 'x' }, 'unknown field "secret"'],
      [{ issuer: ISSUER, audience: 'a', userLimits: [{ name: 'm', ttlMs: 0, limit: 1 }] }, 'ttlMs must be'],
      [{ issuer: ISSUER, audience: 'a', userLimits: {} }, 'userLimits must be an array'],
      ['https://x', 'must be an object'],
    ])('refuses %j', (oidc, expected) => {
      expect(message(() => parseConsumer({ id: 'spa', upstreams: ['macro'], oidc }, 0, KNOWN))).toContain(
        expected,
      );
    });

    it('userLimits round-trip through toRecord', () => {
      const c = parseConsumer(
        {
          id: 'spa',
          upstreams: ['macro'],
          oidc: {
            issuer: ISSUER,
            audience: 'spa',
            userLimits: [{ name: 'per-minute', ttlMs: 60_000, limit: 5 }],
          },
        },
        0,
        KNOWN,
      );
      expect(c.tokens?.userLimits).toEqual([{ name: 'per-minute', ttlMs: 60_000, limit: 5 }]);
      expect(parseConsumer(JSON.parse(JSON.stringify(toRecord(c))), 0, KNOWN)).toEqual(c);
    });

    it('http is allowed to a loopback provider only (development, tests)', () => {
      const c = parseConsumer(
        { id: 'dev', upstreams: ['macro'], oidc: { issuer: 'http://127.0.0.1:8080', audience: 'dev' } },
        0,
        KNOWN,
      );
      expect(c.tokens?.issuer).toBe('http://127.0.0.1:8080');
    });

    it('without keys and without oidc a consumer is refused', () => {
      expect(message(() => parseConsumer({ id: 'x', upstreams: ['macro'] }, 0, KNOWN))).toContain(
        'needs at least one key',
      );
    });

    it('one issuer and audience names one consumer only; other audiences of the issuer may differ', () => {
      const doc = (aud2: string) => ({
        consumers: [
          { id: 'a', upstreams: ['macro'], oidc: { issuer: ISSUER, audience: ['x', 'y'] } },
          { id: 'b', upstreams: ['macro'], oidc: { issuer: ISSUER, audience: aud2 } },
        ],
      });
      expect(parseConsumersDocument(doc('z'), KNOWN).map((c) => c.id)).toEqual(['a', 'b']);
      expect(message(() => parseConsumersDocument(doc('y'), KNOWN))).toContain('audience "y"');
    });
  });
});
