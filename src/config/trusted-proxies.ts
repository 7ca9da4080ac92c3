import { isIP } from 'node:net';

/**
 * `10.0.0.0/8, 192.168.1.7, ::1`: addresses or CIDRs (IPv4 or IPv6), for Fastify's `trustProxy`. Returns
 * undefined when an item is not one, so the caller can name the variable.
 */
export function parseTrustedProxies(text: string | undefined): string[] | undefined {
  const out: string[] = [];
  if (!text || !text.trim()) return out;
  for (const part of text.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const slash = item.indexOf('/');
    const addr = slash === -1 ? item : item.slice(0, slash);
    const version = isIP(addr);
    if (version === 0) return undefined;
    if (slash !== -1) {
      const bits = item.slice(slash + 1);
      if (!/^\d{1,3}$/.test(bits) || Number(bits) > (version === 4 ? 32 : 128)) return undefined;
    }
    out.push(item);
  }
  return out;
}
