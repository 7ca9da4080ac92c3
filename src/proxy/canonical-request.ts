import { GatewayError } from '../core/errors/gateway-error.js';
import {
  formatFromQuery,
  negotiateFormat,
  negotiateLanguage,
  type WireFormat,
} from '../core/http/negotiation.js';
import { baseName, type QueryPairs } from '../core/http/query-string.js';

/**
 * How a vendor reads one query parameter of a route, declared in the upstream's route table:
 * - `list`: `k=a,b`, `k=a&k=b`, `k[]=a` and `k[0]=a&k[1]=b` are one list, sent as `k=a&k=b`;
 * - `boolean`: `true`/`false` in any case and `1`/`0`, sent as `true`/`false`;
 * - `int`: a plain whole number of at most 15 digits, sent without leading zeros;
 * - `date`: `YYYY-MM-DD`, `YYYYMMDD` or an ISO datetime (`T` or a space between date and time), sent as
 *   `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS[.f]][zone]`;
 * - `text`: any value, sent trimmed;
 * - `header`: `lang` or `format`, which the vendor reads as its header (`Accept-Language`, `Accept`): only
 *   the header is sent, so the query and header forms are one request.
 * A value equal to `default` (the default the vendor states) is not sent: the bare request is the same call.
 */
export interface ParamRule {
  readonly kind: 'list' | 'boolean' | 'int' | 'date' | 'text' | 'header';
  readonly default?: string;
}

export type ParamRules = Readonly<Record<string, ParamRule>>;

/** What the canonical form of one route's requests follows from, fixed when the route is compiled. */
export interface CanonicalSpec {
  /** "the macroeconomic data service", for messages. */
  readonly title: string;
  readonly params?: ParamRules;
  /** Languages of the upstream; absent → `lang` is not the gateway's and goes through as sent. */
  readonly languages?: readonly string[];
  readonly defaultLanguage?: string;
  readonly formats?: readonly WireFormat[];
  /** A file route: `Accept` goes through as sent. */
  readonly file?: boolean;
}

/** The negotiation headers a request arrived with. */
export interface ArrivedHeaders {
  readonly accept?: string;
  readonly acceptLanguage?: string;
}

/** One request as the vendor receives it (the query before the credential is injected). */
export interface CanonicalRequest {
  /** In canonical order: sorted by parameter name, repeated names keeping their order. */
  readonly query: QueryPairs;
  readonly format: WireFormat;
  readonly lang?: string;
  readonly accept: string;
  readonly acceptLanguage?: string;
}

const MAX_DIGITS = 15;
const INT = /^-?\d+$/;
const LIST_INDEX = /^\[\d*\]$/;
const DATE = /^(\d{4})-?(\d{2})-?(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(:\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

const refuse = (parameter: string, message: string): GatewayError =>
  new GatewayError('VALIDATION_FAILED', {
    parameter,
    message: `Invalid parameter "${parameter}": ${message}.`,
  });

function realDate(y: string, m: string, d: string): boolean {
  const dt = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return (
    dt.getUTCFullYear() === Number(y) && dt.getUTCMonth() === Number(m) - 1 && dt.getUTCDate() === Number(d)
  );
}

/** The date forms the vendor reads, as messages state them. */
export const DATE_FORMS = 'YYYY-MM-DD, YYYYMMDD or YYYY-MM-DDTHH:MM[:SS] with an optional zone';

/** Why `value` (trimmed, not empty) is no date, as the end of a message about parameter `name`. */
export function notADate(name: string, value: string): string {
  // `+` in a query is a space: `T00:00+01:00` sent unencoded arrives as `T00:00 01:00`.
  const plus = /\d \d{2}:?\d{2}$/.test(value)
    ? ' (a + in a query is read as a space: write the zone as %2B01:00)'
    : '';
  return `${name} must be a date: ${DATE_FORMS}${plus}`;
}

/** The one spelling of a date the vendor reads, or undefined when `v` is none of the accepted forms. */
export function canonicalDate(v: string): string | undefined {
  const d = DATE.exec(v);
  if (d) {
    // Mixed forms like 2024-0101 are not dates.
    if ((v.length !== 8 && v.length !== 10) || !realDate(d[1], d[2], d[3])) return undefined;
    return `${d[1]}-${d[2]}-${d[3]}`;
  }
  const t = DATETIME.exec(v);
  if (!t || !realDate(t[1], t[2], t[3]) || Number(t[4]) > 23 || Number(t[5]) > 59) return undefined;
  if (t[6] && Number(t[6].slice(1, 3)) > 59) return undefined;
  return `${t[1]}-${t[2]}-${t[3]}T${t[4]}:${t[5]}${t[6] ?? ''}${t[7] ?? ''}`;
}

/** One declared scalar value in its canonical spelling, or the 400 naming the parameter. */
function scalar(name: string, rule: ParamRule, raw: string): string {
  const v = raw.trim();
  if (v === '') throw refuse(name, `${name} must not be empty`);
  switch (rule.kind) {
    case 'boolean': {
      const b = v.toLowerCase();
      if (b === 'true' || b === '1') return 'true';
      if (b === 'false' || b === '0') return 'false';
      throw refuse(name, `${name} must be true or false (or 1 or 0)`);
    }
    case 'int': {
      if (!INT.test(v)) throw refuse(name, `${name} must be a whole number written with digits only`);
      const digits = v.replace(/^-?0*/, '');
      if (digits.length > MAX_DIGITS) throw refuse(name, `${name} must have at most ${MAX_DIGITS} digits`);
      return digits === '' ? '0' : v[0] === '-' ? '-' + digits : digits;
    }
    case 'date': {
      const d = canonicalDate(v);
      if (d === undefined) throw refuse(name, notADate(name, v));
      return d;
    }
    default:
      return v;
  }
}

/** Stable sort of pairs by parameter name (`k[0]` sorts as `k`): the order of repeated names is kept. */
function sortByName(pairs: QueryPairs): QueryPairs {
  const keyed = pairs.map((p, i) => ({ p, i, name: baseName(p[0]) }));
  keyed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.i - b.i));
  return keyed.map((k) => k.p);
}

/**
 * The one canonical request for a route's call: what the cache key is derived from and what the vendor
 * receives, so two calls share an entry exactly when the vendor would be asked the same thing. Declared
 * parameters are parsed into their one spelling (lists, booleans, whole numbers, dates, stated defaults
 * dropped, `lang`/`format` folded into their headers where the vendor reads them alike); parameters the
 * route does not declare are sent and keyed as they came. A spelling that cannot be carried over faithfully
 * is refused with a 400 naming the parameter: never forwarded raw under a canonical key.
 */
export function canonicalRequest(
  spec: CanonicalSpec,
  pairs: QueryPairs,
  headers: ArrivedHeaders,
): CanonicalRequest {
  const rules = spec.params;
  const out: QueryPairs = [];
  const formats: string[] = [];
  const langs: Array<[string, string]> = [];
  let declared: Map<string, Array<[string, string]>> | undefined;
  for (const pair of pairs) {
    const [k] = pair;
    if (k === 'format') {
      formats.push(pair[1]);
      continue;
    }
    const base = baseName(k);
    if (spec.languages && base === 'lang') {
      langs.push(pair);
      continue;
    }
    if (rules !== undefined && Object.prototype.hasOwnProperty.call(rules, base)) {
      declared ??= new Map();
      const seen = declared.get(base);
      if (seen) seen.push(pair);
      else declared.set(base, [pair]);
      continue;
    }
    out.push(pair);
  }

  // format: the gateway's own parameter on every upstream (any case, empty = absent), else Accept.
  if (formats.length > 1) throw refuse('format', 'format must be given once');
  const formatParam = formats[0];
  const wantedFormat = formatParam?.trim();
  let format: WireFormat = 'json';
  if (wantedFormat) {
    const f = formatFromQuery(wantedFormat);
    if (!f)
      throw new GatewayError('UNSUPPORTED_FORMAT', {
        parameter: 'format',
        message: 'format must be json or xml.',
      });
    format = f;
  } else if (!spec.file) {
    const f = negotiateFormat(headers.accept);
    if (!f)
      throw new GatewayError('UNSUPPORTED_FORMAT', {
        parameter: 'Accept',
        message: 'The Accept header admits neither application/json nor application/xml.',
      });
    format = f;
  }
  // Never a JSON answer to a request that accepts only XML: an upstream without XML refuses it here.
  if (format === 'xml' && spec.formats && !spec.formats.includes('xml'))
    throw new GatewayError('UNSUPPORTED_FORMAT', {
      parameter: wantedFormat ? 'format' : 'Accept',
      message: `${spec.title} answers in JSON only.`,
    });
  const formatInHeader = rules?.format?.kind === 'header' && !spec.file;
  if (formatParam !== undefined && !formatInHeader) out.push(['format', formatParam]);

  let lang: string | undefined;
  if (spec.languages) {
    if (langs.length > 1 || (langs.length === 1 && langs[0][0] !== 'lang'))
      throw refuse('lang', 'lang must be given once');
    // Same rule as `format`: any case, and empty (or only spaces) is the same as absent.
    const wanted = langs[0]?.[1].trim().toLowerCase();
    if (wanted) {
      if (!spec.languages.includes(wanted))
        throw refuse('lang', `lang must be one of ${spec.languages.join(', ')}`);
      lang = wanted;
      if (rules?.lang?.kind !== 'header') out.push(['lang', wanted]);
    } else {
      lang = negotiateLanguage(
        headers.acceptLanguage,
        spec.languages,
        spec.defaultLanguage ?? spec.languages[0],
      );
      if (langs.length === 1 && rules?.lang?.kind !== 'header') out.push(langs[0]);
    }
  }

  if (declared)
    for (const [name, given] of declared) {
      const rule = rules![name];
      // A header form the upstream has no setting for (no languages): it goes through as sent.
      if (rule.kind === 'header') {
        out.push(...given);
        continue;
      }
      if (rule.kind === 'list') {
        for (const [k, v] of given) {
          if (k !== name && !LIST_INDEX.test(k.slice(name.length)))
            throw refuse(
              name,
              `${name} is a list: ${name}=a,b, ${name}=a&${name}=b, ${name}[]=a or ${name}[0]=a`,
            );
          for (const item of v.split(',')) {
            const t = item.trim();
            if (t === '') throw refuse(name, `${name} must not have empty items`);
            out.push([name, t]);
          }
        }
        continue;
      }
      if (given.length > 1 || given[0][0] !== name) throw refuse(name, `${name} must be given once`);
      const value = scalar(name, rule, given[0][1]);
      if (value !== rule.default) out.push([name, value]);
    }

  return {
    query: out.length > 1 ? sortByName(out) : out,
    format,
    lang,
    accept: spec.file ? (headers.accept ?? '*/*') : format === 'xml' ? 'application/xml' : 'application/json',
    acceptLanguage: lang ?? (spec.languages ? undefined : headers.acceptLanguage || undefined),
  };
}
