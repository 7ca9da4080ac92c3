import { lenientPercentDecode } from '../http/param-name.js';

/**
 * What the gateway's own secrets look like, so that a value holding one is never sent to a vendor, valid
 * key or not: a consumer key (`npm run keygen`, POST /admin/consumers, the sandbox's `atr_demo_…`) and the
 * sandbox's operator token (`atr_op_…`) share one prefix and alphabet. Configured operator and metrics
 * tokens have no fixed shape: they are refused by value (GatewaySecretShapes' `tokens`).
 */
export const GATEWAY_KEY_SHAPES = {
  prefixedKey: {
    pattern: /atr_[A-Za-z0-9_-]{20,}/,
    refused: '`atr_` followed by 20 or more of `A–Z a–z 0–9 _ -` (consumer keys, sandbox operator tokens)',
  },
} as const satisfies Record<string, { pattern: RegExp; refused: string }>;

const SHAPES = Object.values(GATEWAY_KEY_SHAPES).map((s) => s.pattern);
/** The same shapes anywhere in a text, for masking a field name that is itself a key. */
const SHAPES_GLOBAL = Object.values(GATEWAY_KEY_SHAPES).map((s) => new RegExp(s.pattern.source, 'g'));

/** Percent-decodings a vendor stack may still apply to a value the gateway already decoded once. */
const MAX_DECODES = 3;

/**
 * Tells whether a value holds a gateway secret: one of GATEWAY_KEY_SHAPES, or one of the configured
 * tokens, as is or still percent-encoded (a vendor may decode again).
 */
export class GatewaySecretShapes {
  private readonly tokens: readonly string[];

  constructor(tokens: Iterable<string | undefined> = []) {
    this.tokens = [...tokens].filter((t): t is string => typeof t === 'string' && t.length >= 8);
  }

  holds(value: string): boolean {
    let v = value;
    for (let i = 0; ; i++) {
      if (this.plain(v)) return true;
      if (i === MAX_DECODES || v.indexOf('%') === -1) return false;
      const next = lenientPercentDecode(v);
      if (next === v) return false;
      v = next;
    }
  }

  private plain(v: string): boolean {
    // Cheap first: every shape holds `atr_`.
    if (v.indexOf('atr_') !== -1) for (const p of SHAPES) if (p.test(v)) return true;
    for (const t of this.tokens) if (v.indexOf(t) !== -1) return true;
    return false;
  }

  /** A field name fit to print: every key shape and token in it masked. */
  printable(name: string): string {
    let out = name;
    for (const p of SHAPES_GLOBAL) out = out.replace(p, 'atr_…');
    for (const t of this.tokens) out = out.split(t).join('…');
    return out.length > 120 ? `${out.slice(0, 117)}…` : out;
  }
}
