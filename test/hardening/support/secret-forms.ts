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
