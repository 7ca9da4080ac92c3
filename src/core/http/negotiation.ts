/** Content negotiation shared by every upstream: json or xml, and a preferred language. */
export type WireFormat = 'json' | 'xml';

export const JSON_TYPE = 'application/json';
export const XML_TYPE = 'application/xml';

interface Ranged {
  value: string;
  q: number;
}

function parseRanges(header: string): Ranged[] {
  const out: Ranged[] = [];
  for (const part of header.split(',')) {
    const [rawValue, ...params] = part.split(';');
    const value = rawValue.trim().toLowerCase();
    if (!value) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k.trim() === 'q') {
        const n = Number(v);
        q = Number.isFinite(n) ? n : 0;
      }
    }
    out.push({ value, q });
  }
  return out;
}

/**
 * Reads an Accept header the way browsers and HTTP clients send it. Returns the best of json/xml, or
 * `undefined` when the header admits neither (→ 415). JSON wins ties, so `*\/*` and
 * `application/json, text/plain, *\/*` mean JSON.
 */
export function negotiateFormat(accept: string | undefined): WireFormat | undefined {
  // What nearly every client sends, without parsing.
  if (!accept || accept === 'application/json' || accept === '*/*') return 'json';
  let json = 0;
  let xml = 0;
  for (const { value, q } of parseRanges(accept)) {
    if (value === '*/*' || value === 'application/*') {
      json = Math.max(json, q);
      xml = Math.max(xml, q);
    } else if (value === 'application/json' || value.endsWith('+json') || value === 'text/json') {
      json = Math.max(json, q);
    } else if (value === 'application/xml' || value === 'text/xml' || value.endsWith('+xml')) {
      xml = Math.max(xml, q);
    }
  }
  if (json === 0 && xml === 0) return undefined;
  return xml > json ? 'xml' : 'json';
}

/** `format=` query value → wire format; undefined when it is neither json nor xml (→ 415). */
export function formatFromQuery(value: string): WireFormat | undefined {
  const v = value.trim().toLowerCase();
  return v === 'json' || v === 'xml' ? v : undefined;
}

/**
 * Picks the best supported language from an Accept-Language header (`en-US,en;q=0.9,zh;q=0.8`), matching
 * on the primary subtag; falls back to `fallback` when nothing matches.
 */
export function negotiateLanguage(
  header: string | undefined,
  supported: readonly string[],
  fallback: string,
): string {
  if (!header) return fallback;
  let best = fallback;
  let bestQ = 0;
  for (const { value, q } of parseRanges(header)) {
    if (q <= bestQ) continue;
    const primary = value.split('-')[0];
    // Browsers say `ja`; the macro vendor calls Japanese `jp`.
    const candidate = primary === 'ja' ? 'jp' : primary;
    if (supported.includes(candidate)) {
      best = candidate;
      bestQ = q;
    }
  }
  return best;
}

/** Whether the client wants the (error) envelope as XML: `format=xml` wins, else the Accept header. */
export function wantsXml(formatQuery: string | undefined, accept: string | undefined): boolean {
  if (formatQuery !== undefined && formatQuery !== '') return formatQuery.trim().toLowerCase() === 'xml';
  return negotiateFormat(accept) === 'xml';
}
