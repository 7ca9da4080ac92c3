import type { Consumer, ConsumerLimit } from '../core/auth/consumer.js';
import { keysOf } from '../core/auth/consumer-record.js';

/** A key as operators see it: its id and dates, never the key nor its digest. */
export interface ConsumerKeyView {
  id: string;
  createdAt: string | null;
  expiresAt: string | null;
  /** `expired`: past its `expiresAt`, no longer accepted (kept until retired, so the history shows). */
  state: 'active' | 'expired';
}

export interface ConsumerView {
  id: string;
  enabled: boolean;
  upstreams: string[];
  write: boolean;
  limits: ConsumerLimit[];
  weight: number;
  reservedShare: number;
  corsOrigins: string[];
  keys: ConsumerKeyView[];
  /** End-user tokens the consumer accepts (the `oidc` block), or null: keys only. */
  oidc: {
    issuer: string;
    jwksUri: string | null;
    audience: string[];
    algorithms: string[];
    clockSkewSeconds: number;
    jwksCooldownMs: number;
  } | null;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function consumerView(c: Consumer, now: number): ConsumerView {
  return {
    id: c.id,
    enabled: c.enabled !== false,
    upstreams: [...c.upstreams],
    write: c.write,
    limits: c.limits.map((l) => ({ name: l.name, ttlMs: l.ttlMs, limit: l.limit })),
    weight: c.weight,
    reservedShare: c.reservedShare,
    corsOrigins: [...c.corsOrigins],
    keys: keysOf(c).map((k) => ({
      id: k.id,
      createdAt: iso(k.createdAt),
      expiresAt: iso(k.expiresAt),
      state: k.expiresAt !== undefined && k.expiresAt <= now ? 'expired' : 'active',
    })),
    oidc: c.tokens
      ? {
          issuer: c.tokens.issuer,
          jwksUri: c.tokens.jwksUri ?? null,
          audience: [...c.tokens.audience],
          algorithms: [...c.tokens.algorithms],
          clockSkewSeconds: c.tokens.clockSkewSeconds,
          jwksCooldownMs: c.tokens.jwksCooldownMs,
        }
      : null,
  };
}
