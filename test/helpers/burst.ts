import { createHash } from 'node:crypto';
import { Pool } from 'undici';

export interface BurstResult {
  status: number;
  cache: string | undefined;
  body: Buffer;
}

export interface BurstOptions {
  /**
   * Send in waves of this many requests, `waveGapMs` apart. A listener's accept backlog (511 in Node) drops
   * SYNs when 1,000 connections open in the same instant, and the clients then wait for SYN retransmits
   * (1 s, 3 s, 7 s); waves keep every connect accepted at once while all requests are still in flight
   * together, as long as the upstream answers slower than the waves take.
   */
  waveSize?: number;
  waveGapMs?: number;
}

/**
 * Sends `n` identical GETs, each on its own connection (a Pool with n connections really opens them), spread
 * round-robin over `bases`, all in flight together.
 */
export async function burst(
  bases: readonly string[],
  path: string,
  n: number,
  headers: Record<string, string>,
  opts: BurstOptions = {},
): Promise<BurstResult[]> {
  const waveSize = opts.waveSize ?? n;
  const gap = opts.waveGapMs ?? 0;
  const per = Math.ceil(n / bases.length);
  const pools = bases.map((b) => new Pool(b, { connections: per, pipelining: 1, connectTimeout: 20_000 }));
  try {
    return await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const wave = Math.floor(i / waveSize);
        if (wave > 0) await new Promise((r) => setTimeout(r, wave * gap));
        const res = await pools[i % pools.length].request({ method: 'GET', path, headers });
        const body = Buffer.from(await res.body.arrayBuffer());
        const cache = res.headers['x-cache'];
        return { status: res.statusCode, cache: typeof cache === 'string' ? cache : undefined, body };
      }),
    );
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
}

export function sha256Hex(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}
