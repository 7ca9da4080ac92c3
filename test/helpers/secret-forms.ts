/**
 * Every form in which a secret can leave the gateway: literal, URL-encoded (either hex case, and twice),
 * JSON-escaped (`\/` as PHP writes it, and `\u002f` escapes), and base64 — the base64 forms as the stretch
 * of characters that only the secret's own bytes determine, at each of the three byte alignments and in
 * both alphabets, so the secret is found inside any base64 blob (`user:<key>` in a Basic header included).
 */
export interface SecretForm {
  form: string;
  text: string;
}

function base64Stretches(secret: string): SecretForm[] {
  const out: SecretForm[] = [];
  const bytes = Buffer.from(secret);
  for (const p of [0, 1, 2]) {
    const all = Buffer.concat([Buffer.alloc(p, 0x3a), bytes]);
    const from = Math.ceil((8 * p) / 6);
    const to = Math.floor((8 * (p + bytes.length)) / 6);
    for (const alphabet of ['base64', 'base64url'] as const) {
      const text = all.toString(alphabet).slice(from, to);
      if (text.length >= 12) out.push({ form: `${alphabet} (offset ${p})`, text });
    }
  }
  return out;
}

export function secretForms(secret: string): SecretForm[] {
  const enc = encodeURIComponent(secret);
  const candidates: SecretForm[] = [
    { form: 'literal', text: secret },
    { form: 'URL-encoded', text: enc },
    { form: 'URL-encoded (lower-case hex)', text: enc.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()) },
    { form: 'URL-encoded twice', text: encodeURIComponent(enc) },
    { form: 'form-encoded', text: new URLSearchParams({ x: secret }).toString().slice(2) },
    { form: 'JSON-escaped (\\/)', text: secret.replace(/\//g, '\\/') },
    {
      form: 'JSON \\u escapes',
      text: secret.replace(/[/+=]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`),
    },
    {
      form: 'JSON \\u escapes (upper-case)',
      text: secret.replace(/[/+=]/g, (c) => `\\u00${c.charCodeAt(0).toString(16).toUpperCase()}`),
    },
    { form: 'base64', text: Buffer.from(secret).toString('base64') },
    { form: 'base64url', text: Buffer.from(secret).toString('base64url') },
    ...base64Stretches(secret),
  ];
  const seen = new Set<string>();
  return candidates.filter((c) => (seen.has(c.text) ? false : (seen.add(c.text), true)));
}

export interface Finding {
  secret: string;
  form: string;
}

/** Which named secrets appear in `text`, in which forms. */
export function findSecrets(text: string, secrets: ReadonlyMap<string, SecretForm[]>): Finding[] {
  const out: Finding[] = [];
  for (const [name, forms] of secrets)
    for (const f of forms) if (text.includes(f.text)) out.push({ secret: name, form: f.form });
  return out;
}

const hex2 = (c: string, upper: boolean): string => {
  const h = c.charCodeAt(0).toString(16).padStart(2, '0');
  return upper ? h.toUpperCase() : h;
};
const each = (s: string, f: (c: string, i: number) => string): string => [...s].map(f).join('');
const punct = (c: string): boolean => !/[A-Za-z0-9]/.test(c);

/**
 * Every escaping a JSON, XML, HTML, URL or form encoder of a vendor stack may write a secret in, written out
 * here independently of the product: what the hostile vendors of the leak suite echo.
 */
export const ESCAPINGS: Record<string, (s: string) => string> = {
  'JSON \\/': (s) => s.replace(/\//g, '\\/'),
  'JSON \\u002f (lower-case hex)': (s) => each(s, (c) => (punct(c) ? `\\u00${hex2(c, false)}` : c)),
  'JSON \\u002F (upper-case hex), every character': (s) => each(s, (c) => `\\u00${hex2(c, true)}`),
  'JSON in a JSON string (\\\\\\/)': (s) => s.replace(/\//g, '\\\\\\/'),
  'HTML &#47;': (s) => each(s, (c) => (punct(c) ? `&#${c.charCodeAt(0)};` : c)),
  'HTML &#00047; (leading zeros)': (s) => each(s, (c) => (punct(c) ? `&#000${c.charCodeAt(0)};` : c)),
  'XML &#x2F;': (s) => each(s, (c) => (punct(c) ? `&#x${hex2(c, true)};` : c)),
  'XML &#x002f; (lower case, zeros)': (s) => each(s, (c) => (punct(c) ? `&#x00${hex2(c, false)};` : c)),
  'HTML named (&sol; &plus; &equals;)': (s) =>
    s.replace(/\//g, '&sol;').replace(/\+/g, '&plus;').replace(/=/g, '&equals;'),
  'HTML escaped twice (&amp;#47;)': (s) => each(s, (c) => (punct(c) ? `&amp;#${c.charCodeAt(0)};` : c)),
  'URL %2f (lower case)': (s) => each(s, (c) => (punct(c) ? `%${hex2(c, false)}` : c)),
  'URL %2B, every character': (s) => each(s, (c) => `%${hex2(c, true)}`),
  'URL twice (%252F)': (s) => each(s, (c) => (punct(c) ? `%25${hex2(c, true)}` : c)),
  'form (+ for space, %2B for plus)': (s) => new URLSearchParams({ x: s }).toString().slice(2),
  'mixed (\\/, %2B, &#61;, \\u002F)': (s) =>
    each(s, (c, i) =>
      c === '/' ? (i % 2 ? '\\/' : '\\u002F') : c === '+' ? '%2B' : c === '=' ? '&#61;' : c,
    ),
};

const NAMED: Record<string, string> = {
  amp: '&',
  sol: '/',
  plus: '+',
  equals: '=',
  quot: '"',
  lt: '<',
  gt: '>',
};

/** One round of decoding every escaping above (the suite's own reader, not the product's). */
function decodeOnce(text: string): string {
  return text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\(["/\\])/g, '$1')
    .replace(/&#[xX]([0-9a-fA-F]+);/g, (_m, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#([0-9]+);/g, (_m, d: string) => String.fromCodePoint(parseInt(d, 10)))
    .replace(/&([a-z]+);/g, (m, n: string) => NAMED[n] ?? m)
    .replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/**
 * Which named secrets a reader decoding the text (up to three rounds, so escapings within escapings too)
 * would find, literal or base64 (the plain forms of `findSecrets` are left to it).
 */
export function findDecoded(text: string, secrets: ReadonlyMap<string, SecretForm[]>): Finding[] {
  const out: Finding[] = [];
  let t = text;
  for (let round = 1; round <= 3; round++) {
    const next = decodeOnce(t);
    if (next === t) break;
    t = next;
    const spaced = t.replace(/\+/g, ' ');
    for (const [name, forms] of secrets)
      for (const f of forms)
        if (
          (f.form === 'literal' || f.form.startsWith('base64')) &&
          (t.includes(f.text) || spaced.includes(f.text))
        )
          if (!text.includes(f.text)) out.push({ secret: name, form: `${f.form}, decoded ${round}×` });
  }
  return out;
}
