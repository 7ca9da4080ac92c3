import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { toQueryObject, parseQuery, stringifyQuery } from '../../src/core/http/query-string.js';
import { validationError, VALIDATOR_OPTIONS } from '../../src/core/http/query-validator.js';
import { canonicalDate, canonicalRequest, type CanonicalSpec } from '../../src/proxy/canonical-request.js';
import { FeedsQueryDto } from '../../src/upstreams/macro/dto/feeds-query.dto.js';
import { LayoutTableQueryDto } from '../../src/upstreams/macro/dto/layout-table-query.dto.js';
import { FEEDS_PARAMS, MACRO_COMMON_PARAMS } from '../../src/upstreams/macro/macro-params.js';
import { MACRO_LANGUAGES } from '../../src/upstreams/macro/macro.constants.js';

/** What `compileRoute` gives `/feeds`: the interface's common parameters and the route's own. */
const FEEDS_RULES = { ...MACRO_COMMON_PARAMS, ...FEEDS_PARAMS };
const feeds: CanonicalSpec = {
  title: 'the macroeconomic data service',
  params: FEEDS_RULES,
  languages: MACRO_LANGUAGES,
  defaultLanguage: 'en',
};
const undeclared: CanonicalSpec = { ...feeds, params: undefined };

/** The query the vendor receives for `qs` (and the negotiation headers), as a string. */
const sent = (qs: string, headers = {}, spec = feeds) =>
  stringifyQuery(canonicalRequest(spec, parseQuery(qs), headers).query);
const headersOf = (qs: string, headers = {}, spec = feeds) => {
  const c = canonicalRequest(spec, parseQuery(qs), headers);
  return { accept: c.accept, acceptLanguage: c.acceptLanguage };
};

function refusal(fn: () => unknown): { parameter?: string; message: string; status: number } {
  try {
    fn();
  } catch (e) {
    if (e instanceof GatewayError) return { parameter: e.parameter, message: e.message, status: e.status };
    throw e;
  }
  throw new Error('not refused');
}

/** The DTO's refusal of `qs`, as the proxy route's validator reports it (undefined when it passes). */
function dtoRefusal(dto: new () => object, qs: string): string | undefined {
  const entity = plainToInstance(dto, toQueryObject(parseQuery(qs)));
  const errors = validateSync(entity, VALIDATOR_OPTIONS);
  return errors.length ? validationError(errors).message : undefined;
}

describe('the canonical request of a route', () => {
  it('reads every list form as the vendor does and sends the repeated form', () => {
    const one = 'status=DELETED';
    for (const qs of ['status=DELETED', 'status[0]=DELETED', 'status[]=DELETED', 'status=%20DELETED'])
      expect([qs, sent(qs)]).toEqual([qs, one]);
    const two = 'status=ACTIVE&status=DELETED';
    for (const qs of [
      'status=ACTIVE,DELETED',
      'status=ACTIVE%2C%20DELETED',
      'status=ACTIVE&status=DELETED',
      'status[0]=ACTIVE&status[1]=DELETED',
      'status[]=ACTIVE&status[]=DELETED',
      'status[0]=ACTIVE&status=DELETED',
    ])
      expect([qs, sent(qs)]).toEqual([qs, two]);
    // The order of the items is the request's (a PHP reader iterates `k[1]` before `k[0]` when sent so).
    expect(sent('status[1]=DELETED&status[0]=ACTIVE')).toBe('status=DELETED&status=ACTIVE');
    expect(refusal(() => sent('status[x]=ACTIVE'))).toMatchObject({ parameter: 'status', status: 400 });
    expect(refusal(() => sent('status=ACTIVE,'))).toMatchObject({ parameter: 'status', status: 400 });
  });

  it('sends booleans as true/false and drops the stated default false', () => {
    for (const v of ['true', 'True', 'TRUE', '1', ' true'])
      expect(sent(`with_model_information=${encodeURIComponent(v)}`)).toBe('with_model_information=true');
    for (const v of ['false', 'False', '0']) expect(sent(`with_model_information=${v}`)).toBe('');
    expect(refusal(() => sent('with_model_information=yes')).parameter).toBe('with_model_information');
  });

  it('sends whole numbers plainly, drops the stated defaults, refuses 16 digits by name', () => {
    expect(sent('offset=007&limit=11')).toBe('limit=11&offset=7');
    expect(sent('offset=0&limit=100&created_order=ASC')).toBe('');
    expect(sent('offset=000')).toBe('');
    expect(refusal(() => sent('offset=1234567890123456'))).toEqual({
      parameter: 'offset',
      status: 400,
      message: 'Invalid parameter "offset": offset must have at most 15 digits.',
    });
    expect(refusal(() => sent('offset=1e3')).parameter).toBe('offset');
    expect(refusal(() => sent('offset=1&offset=2')).message).toContain('offset must be given once');
    expect(refusal(() => sent('offset[0]=1')).message).toContain('offset must be given once');
  });

  it('normalises dates to the forms the vendor reads, or refuses them by name', () => {
    expect(sent('created_after=2020-01-01%2000:00')).toBe('created_after=2020-01-01T00%3A00');
    expect(sent('created_after=20200101')).toBe('created_after=2020-01-01');
    expect(sent('created_after=2020-01-01T12:30:15.5%2B01:00')).toBe(
      'created_after=2020-01-01T12%3A30%3A15.5%2B01%3A00',
    );
    expect(canonicalDate('2020-02-30')).toBeUndefined();
    expect(canonicalDate('2020-01-01T24:00')).toBeUndefined();
    expect(canonicalDate('2020-0101')).toBeUndefined();
    // `+` in a query is a space: an unencoded zone offset is not a date, and the message says why.
    expect(refusal(() => sent('created_after=2020-01-01T00:00+01:00'))).toMatchObject({
      parameter: 'created_after',
      message: expect.stringContaining('(a + in a query is read as a space: write the zone as %2B01:00)'),
    });
    expect(refusal(() => sent('created_after=2020-01-01T10:00:75')).message).not.toContain('a + in a query');
    expect(refusal(() => sent('created_before=%20%20')).message).toContain('must not be empty');
  });

  it('treats a whitespace-only value as empty: refused where empty is, absent for lang and format', () => {
    expect(refusal(() => sent('filter_id=%20%20'))).toMatchObject({ parameter: 'filter_id', status: 400 });
    expect(sent('filter_id=%20F1%20')).toBe('filter_id=F1');
    expect(sent('lang=%20%20')).toBe('');
    expect(headersOf('lang=%20%20', { acceptLanguage: 'zh' }).acceptLanguage).toBe('zh');
    expect(headersOf('format=%20', { accept: 'application/xml' }).accept).toBe('application/xml');
  });

  it('folds lang and format into their headers: bare, ?lang=en and Accept-Language: en are one call', () => {
    const bare = { query: sent(''), headers: headersOf('') };
    for (const [qs, h] of [
      ['lang=en', {}],
      ['lang=EN', {}],
      ['', { acceptLanguage: 'en' }],
      ['format=json', {}],
      ['format=JSON', { accept: 'application/json' }],
      ['', { accept: '*/*' }],
    ] as const)
      expect([qs, h, sent(qs, h), headersOf(qs, h)]).toEqual([qs, h, bare.query, bare.headers]);
    expect(bare.headers).toEqual({ accept: 'application/json', acceptLanguage: 'en' });
    expect(headersOf('lang=zh', { acceptLanguage: 'ru' })).toEqual({
      accept: 'application/json',
      acceptLanguage: 'zh',
    });
    expect(headersOf('format=xml')).toEqual({ accept: 'application/xml', acceptLanguage: 'en' });
    expect(sent('lang=zh&format=xml')).toBe('');
    expect(refusal(() => sent('lang=en&lang=zh'))).toEqual({
      parameter: 'lang',
      status: 400,
      message: 'Invalid parameter "lang": lang must be given once.',
    });
    expect(refusal(() => sent('lang=de')).message).toContain('lang must be one of en, zh, ru, id, jp');
    expect(refusal(() => sent('format=csv')).status).toBe(415);
    expect(refusal(() => sent('format=json&format=xml')).parameter).toBe('format');
  });

  it('forwards and keys undeclared parameters as they came, in name order', () => {
    expect(sent('b=2&Audit=90&x=2&x=1&a=True')).toBe('Audit=90&a=True&b=2&x=2&x=1');
    expect(sent('ids[1]=b&ids[0]=a&c=1')).toBe('c=1&ids[1]=b&ids[0]=a');
    // A route that declares nothing: only the gateway's own lang and format are read.
    expect(sent('status[0]=DELETED&with_model_information=1&lang=ZH', {}, undeclared)).toBe(
      'lang=zh&status[0]=DELETED&with_model_information=1',
    );
  });

  it('agrees with the DTOs on what each declared parameter is', () => {
    // Kinds by the DTO's own rules; token is the consumer's key (never forwarded), format is negotiation.
    const KIND_BY_RULE: Record<string, string> = { isBoolean: 'boolean', isInt: 'int', isSpecDate: 'date' };
    for (const [dto, table] of [
      [FeedsQueryDto, FEEDS_RULES],
      [LayoutTableQueryDto, MACRO_COMMON_PARAMS],
    ] as const) {
      const metas = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
      const props = new Set(metas.map((m) => m.propertyName).filter((p) => p !== 'token'));
      expect(new Set(Object.keys(table))).toEqual(props);
      for (const m of metas) {
        const rule = (table as Record<string, { kind: string }>)[m.propertyName];
        if (m.each) expect([m.propertyName, rule.kind]).toEqual([m.propertyName, 'list']);
        const kind = m.name ? KIND_BY_RULE[m.name] : undefined;
        if (kind) expect([m.propertyName, rule.kind]).toEqual([m.propertyName, kind]);
      }
    }
  });
});

describe('the DTO messages name the real problem', () => {
  it('lang given twice', () => {
    expect(dtoRefusal(LayoutTableQueryDto, 'lang=en&lang=zh')).toBe(
      'Invalid parameter "lang": lang must be given once.',
    );
    expect(dtoRefusal(FeedsQueryDto, 'lang=de')).toContain('lang must be one of');
  });

  it('an offset of 16 or more digits', () => {
    expect(dtoRefusal(FeedsQueryDto, 'offset=1234567890123456')).toBe(
      'Invalid parameter "offset": offset must have at most 15 digits.',
    );
    expect(dtoRefusal(FeedsQueryDto, 'offset=000000000000000005')).toBeUndefined();
    expect(dtoRefusal(FeedsQueryDto, 'offset=-1')).toContain('offset must be a whole number ≥ 0');
  });

  it('an empty item of a list', () => {
    for (const qs of ['status=ACTIVE,', 'status=ACTIVE,%20', 'status=ACTIVE&status=%20'])
      expect([qs, dtoRefusal(FeedsQueryDto, qs)]).toEqual([
        qs,
        'Invalid parameter "status": status must not have empty items.',
      ]);
    expect(dtoRefusal(FeedsQueryDto, 'status=ACTIVE,PAUSED')).toBe(
      'Invalid parameter "status": status must be ACTIVE and/or DELETED.',
    );
  });

  it('dates: the canonical reading and message, given twice, empty, an unencoded + before the zone', () => {
    for (const qs of ['created_after=2020-01-01T10:00:75', 'created_after=2020-0101']) {
      const canonical = refusal(() => sent(qs)).message;
      expect([qs, dtoRefusal(FeedsQueryDto, qs)]).toEqual([qs, canonical]);
    }
    expect(dtoRefusal(FeedsQueryDto, 'created_after=2020-01-01T00:00+01:00')).toContain(
      'a + in a query is read as a space',
    );
    expect(dtoRefusal(FeedsQueryDto, 'created_after=2020-01-01%2000:00')).toBeUndefined();
    expect(dtoRefusal(FeedsQueryDto, 'created_before=%20%20')).toBe(
      'Invalid parameter "created_before": created_before must not be empty.',
    );
    expect(dtoRefusal(FeedsQueryDto, 'created_after=20200101&created_after=20200102')).toBe(
      'Invalid parameter "created_after": created_after must be given once.',
    );
  });

  it('a whitespace-only filter_id is empty', () => {
    expect(dtoRefusal(FeedsQueryDto, 'filter_id=%20%20')).toBe(
      'Invalid parameter "filter_id": filter_id must not be empty.',
    );
    expect(dtoRefusal(FeedsQueryDto, 'filter_id=a&filter_id=b')).toContain('filter_id must be given once');
  });
});
