// Content and language negotiation of the fake CEIC: `format`/`Accept`, `lang`/`Accept-Language`.
import type { FakeRequest } from '../fake-upstream.js';

export const MACRO_LANGS = ['en', 'zh', 'ru', 'id', 'jp'] as const;
export type MacroLang = (typeof MACRO_LANGS)[number];

/** Query `format` wins over `Accept`; undefined = unsupported (415). */
export function negotiateFormat(req: FakeRequest): 'json' | 'xml' | undefined {
  const format = req.query.get('format');
  if (format !== null && format !== '') {
    const f = format.toLowerCase();
    return f === 'json' || f === 'xml' ? f : undefined;
  }
  const accept = String(req.headers.accept ?? '').toLowerCase();
  if (accept.trim() === '') return 'json';
  const types = accept.split(',').map((part) => (part.split(';')[0] ?? '').trim());
  if (types.some((t) => t === 'application/json' || t === 'text/json')) return 'json';
  if (types.some((t) => t === 'application/xml' || t === 'text/xml')) return 'xml';
  if (types.some((t) => t === '*/*' || t === 'application/*')) return 'json';
  return undefined;
}

/** Query `lang` wins over `Accept-Language`; unknown languages fall back to English. */
export function negotiateLang(req: FakeRequest): MacroLang {
  const isLang = (v: string): v is MacroLang => (MACRO_LANGS as readonly string[]).includes(v);
  const q = req.query.get('lang');
  if (q !== null && q !== '') return isLang(q.toLowerCase()) ? (q.toLowerCase() as MacroLang) : 'en';
  const header = String(req.headers['accept-language'] ?? '');
  const first = (header.split(',')[0] ?? '').split(';')[0]?.split('-')[0]?.trim().toLowerCase() ?? '';
  return isLang(first) ? first : 'en';
}

/** Visible translation: `name` and `title` fields get a "[zh] " prefix. */
export function localize(value: unknown, lang: MacroLang): unknown {
  if (lang === 'en') return value;
  if (Array.isArray(value)) return value.map((v) => localize(v, lang));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] =
        (k === 'name' || k === 'title') && typeof v === 'string' ? `[${lang}] ${v}` : localize(v, lang);
    }
    return out;
  }
  return value;
}
