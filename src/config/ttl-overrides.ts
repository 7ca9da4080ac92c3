const DAY_MS = 24 * 60 * 60 * 1000;
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `feeds=10s,macro.layout=30m,dictionary=0`: per-family TTL overrides (`upstream.family` beats `family`).
 * Returns undefined when the text is malformed, so the caller can name the variable.
 */
export function parseTtlOverrides(text: string | undefined): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  if (!text || !text.trim()) return out;
  for (const part of text.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const eq = item.indexOf('=');
    if (eq <= 0) return undefined;
    const name = item.slice(0, eq).trim();
    const m = DURATION.exec(item.slice(eq + 1).trim());
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)?$/.test(name) || !m) return undefined;
    const ms = Math.round(Number(m[1]) * UNIT_MS[m[2] ?? 'ms']);
    if (!(ms >= 0 && ms <= 30 * DAY_MS)) return undefined;
    out[name] = ms;
  }
  return out;
}
