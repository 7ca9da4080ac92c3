import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { SecretRedactor } from '../../src/core/logging/secret-redactor.js';
import { companyErrorMapper } from '../../src/upstreams/company/company-error.mapper.js';
import { emisErrorMapper } from '../../src/upstreams/shared/emis-error.mapper.js';
import { emisCodeOf, emisErrorShape } from '../../src/upstreams/shared/emis-error.shape.js';

const JSON_CT = 'application/json; charset=utf-8';
const XML_CT = 'application/xml; charset=utf-8';
const b = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

describe('EMIS ApiError mapper (documents, deals)', () => {
  const { read } = emisErrorMapper;
  const isErrorBody = emisErrorMapper.isErrorBody!;

  describe('known shapes: {"errors":[{code,detail}]}, whatever the HTTP status', () => {
    it.each([
      [2000, 'Authentication required: pass token or sessionId', 'UPSTREAM_AUTH_FAILED'],
      [2001, 'Invalid username or password', 'UPSTREAM_AUTH_FAILED'],
      [2002, 'Session expired', 'UPSTREAM_AUTH_FAILED'],
      [2003, 'Invalid token', 'UPSTREAM_AUTH_FAILED'],
      [3000, 'Unknown API method GET /Search/nope/', 'UPSTREAM_BAD_REQUEST'],
      [3002, 'Missing parameter: key', 'UPSTREAM_BAD_REQUEST'],
      [3002, 'Missing parameter: sessionId', 'UPSTREAM_AUTH_FAILED'],
      [3004, 'File not found: F1', 'NOT_FOUND'],
      [3005, 'Invalid parameter: order', 'UPSTREAM_BAD_REQUEST'],
      [4029, 'HTTP 429', 'UPSTREAM_RATE_LIMITED'],
      [1040, 'OUTPUT_FORMAT_UNKNOWN', 'UPSTREAM_ERROR'],
      [1060, 'Backend forwarded exception', 'UPSTREAM_ERROR'],
    ])('HTTP 200 code %d (%s) → %s', (code, detail, expected) => {
      const body = b({ errors: [{ code, detail }] });
      expect(isErrorBody(body, JSON_CT)).toBe(true);
      expect(read(200, body, JSON_CT)).toEqual({ code: expected, upstreamCode: code, message: detail });
    });

    it('an auth-like message without a known code is an auth failure', () => {
      const body = b({ errors: [{ code: 9999, detail: 'Your session is no longer valid' }] });
      expect(read(200, body, JSON_CT).code).toBe('UPSTREAM_AUTH_FAILED');
    });

    it('on a non-2xx status an unclassified code leaves the status to decide', () => {
      expect(read(500, b({ errors: [{ code: 1000, detail: 'boom' }] }), JSON_CT)).toEqual({
        code: undefined,
        upstreamCode: 1000,
        message: 'boom',
      });
      expect(read(401, b({ errors: [{ code: 2002, detail: 'Session expired' }] }), JSON_CT).code).toBe(
        'UPSTREAM_AUTH_FAILED',
      );
    });

    it('takes a numeric string code, an errors object and a bare string', () => {
      expect(read(200, b({ errors: [{ code: '2002', detail: 'Session expired' }] }), JSON_CT)).toMatchObject({
        code: 'UPSTREAM_AUTH_FAILED',
        upstreamCode: 2002,
      });
      expect(read(200, b({ errors: { code: 3002, detail: 'Missing' } }), JSON_CT)).toMatchObject({
        code: 'UPSTREAM_BAD_REQUEST',
        upstreamCode: 3002,
      });
      expect(read(200, b({ errors: 'it broke' }), JSON_CT)).toEqual({
        code: 'UPSTREAM_ERROR',
        upstreamCode: undefined,
        message: 'it broke',
      });
    });

    it('reads the XML twin (<response><errors><code>…)', () => {
      const xml = b(
        '<?xml version="1.0" encoding="UTF-8"?><response><errors><code>2002</code><detail>Session &amp; token expired</detail></errors></response>',
      );
      expect(isErrorBody(xml, XML_CT)).toBe(true);
      expect(read(200, xml, XML_CT)).toEqual({
        code: 'UPSTREAM_AUTH_FAILED',
        upstreamCode: 2002,
        message: 'Session & token expired',
      });
      // Without a content type, a body starting with < is read as XML.
      expect(isErrorBody(xml, undefined)).toBe(true);
    });
  });

  describe('success bodies are not errors', () => {
    it.each([
      ['data only', { data: { _type: 'Emis\\Entity\\Api\\Document\\Result', total: 0 }, version: '1.3.2' }],
      ['"errors" nested inside data', { data: { errors: 3, documents: [{ title: 'errors' }] } }],
      ['"errors" inside a string', { data: { title: 'Quoted "errors" in a title' } }],
      ['an empty errors array beside data', { data: [], errors: [] }],
      ['errors: null', { data: 1, errors: null }],
    ])('%s', (_n, body) => expect(isErrorBody(b(body), JSON_CT)).toBe(false));

    it('XML data and non-JSON bodies', () => {
      expect(
        isErrorBody(b('<?xml version="1.0"?><response><data><id>1</id></data></response>'), XML_CT),
      ).toBe(false);
      expect(isErrorBody(b('%PDF-1.4 errors'), 'application/pdf')).toBe(false);
      expect(isErrorBody(b('{"errors": [ truncated'), JSON_CT)).toBe(false);
    });
  });

  describe('unknown shapes, empty and non-JSON bodies never crash', () => {
    it.each([
      ['empty', ''],
      ['non-JSON (HTML)', '<html><body>Bad Gateway</body></html>'],
      ['unknown object', { foo: 'bar' }],
      ['a JSON array', [1, 2, 3]],
      ['a JSON scalar', 42],
      ['null', 'null'],
      ['errors: [null]', { errors: [null] }],
      ['truncated JSON', '{"errors":[{"code":20'],
    ])('%s', (_n, raw) => {
      for (const status of [200, 400, 502]) {
        const info = read(status, b(raw), JSON_CT);
        expect(typeof info).toBe('object');
        // A 2xx that reached read() is an error whatever it says; otherwise the status decides.
        if (status !== 200) expect(info.code).toBeUndefined();
      }
      expect(() => isErrorBody(b(raw), JSON_CT)).not.toThrow();
    });

    it('an empty body reads as nothing', () => {
      expect(read(502, Buffer.alloc(0), JSON_CT)).toEqual({});
      expect(isErrorBody(Buffer.alloc(0), JSON_CT)).toBe(false);
    });
  });
});

describe('company mapper (ErrorResponse / JsonErrorResponseData, fields unknown)', () => {
  const { read } = companyErrorMapper;

  it.each([
    [
      'error object',
      { error: { code: 'INVALID_TOKEN', message: 'Invalid or missing token' } },
      { upstreamCode: 'INVALID_TOKEN', message: 'Invalid or missing token' },
    ],
    [
      'errors array',
      { errors: [{ code: 'INVALID_PARAMETER', message: 'limit must be between 1 and 100' }] },
      { upstreamCode: 'INVALID_PARAMETER', message: 'limit must be between 1 and 100' },
    ],
    [
      'flat message and numeric code',
      { message: 'Not found', code: 404 },
      { upstreamCode: 404, message: 'Not found' },
    ],
    [
      'errors object',
      { errors: { status: 400, code: 'BAD', message: 'bad filter' } },
      { upstreamCode: 'BAD', message: 'bad filter' },
    ],
    [
      'nested data (JsonErrorResponseData)',
      { data: { errors: [{ code: 'E42', detail: 'statement not available' }] } },
      { upstreamCode: 'E42', message: 'statement not available' },
    ],
    ['detail only', { detail: 'Rate limit exceeded' }, { message: 'Rate limit exceeded' }],
    [
      'OAuth-style error string',
      { error: 'invalid_token', error_description: 'The token expired' },
      { message: 'The token expired' },
    ],
    ['a JSON string', '"Service unavailable"', { message: 'Service unavailable' }],
    ['deeply nested', { error: { error: { error: { error: { error: { message: 'deep' } } } } } }, {}],
  ])('%s', (_n, body, expected) => {
    expect(read(400, b(body), JSON_CT)).toEqual(expected);
  });

  it.each([
    ['empty', ''],
    ['non-JSON', '<html>502 Bad Gateway</html>'],
    ['unknown shape', { foo: [1, 2], bar: { baz: true } }],
    ['array of scalars', [1, 'x', null]],
    ['null', 'null'],
    ['number', '17'],
    ['truncated', '{"error":{"code":"X"'],
  ])('%s → nothing, never a crash', (_n, raw) => {
    expect(read(500, b(raw), JSON_CT)).toEqual({});
  });
});

describe('the EMIS errors array beside error', () => {
  const redactor = new SecretRedactor();
  redactor.register('sbx_secret_in_message');
  const shape = emisErrorShape(['documents', 'news'], redactor);

  it('uses the vendor integer code for upstream errors, the HTTP status otherwise', () => {
    const upstream = new GatewayError('UPSTREAM_AUTH_FAILED', {
      upstreamCode: 2002,
      message: 'Session expired',
    });
    expect(shape.extend(upstream)).toEqual({ errors: [{ code: 2002, detail: 'Session expired' }] });
    expect(emisCodeOf(new GatewayError('UPSTREAM_UNAVAILABLE', { upstreamCode: 'ECONNREFUSED' }))).toBe(503);
    expect(emisCodeOf(new GatewayError('NOT_FOUND', { upstreamCode: '3004' }))).toBe(3004);
    expect(emisCodeOf(new GatewayError('UNAUTHENTICATED'))).toBe(401);
    expect(emisCodeOf(new GatewayError('CONSUMER_RATE_LIMITED'))).toBe(429);
    expect(emisCodeOf(new GatewayError('INTERNAL', { upstreamCode: 1.5 }))).toBe(500);
  });

  it('is always an array of {integer code, string detail}; secrets scrubbed', () => {
    const out = shape.extend(
      new GatewayError('UPSTREAM_ERROR', { message: 'echo sbx_secret_in_message' }),
    ) as {
      errors: Array<{ code: number; detail: string }>;
    };
    expect(Array.isArray(out.errors)).toBe(true);
    expect(out.errors[0]).toEqual({ code: 502, detail: 'echo [REDACTED]' });
  });
});
