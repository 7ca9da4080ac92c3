import { createHash } from 'node:crypto';

/** The two body sizes every server returns. */
export const BODY_SIZES = ['2k', '200k'] as const;
export type BodySize = (typeof BODY_SIZES)[number];

const TARGET_BYTES: Record<BodySize, number> = { '2k': 2 * 1024, '200k': 200 * 1024 };

/**
 * A CEIC-like series-data answer of about `bytes` bytes, built deterministically so every process (the
 * ceiling, the fake upstream) produces the same bytes. It is `JSON.stringify` output, so a server that parses
 * and re-serialises it (the naive proxy) still sends byte-identical bytes, which the runner checks by md5.
 */
function seriesData(bytes: number): Buffer {
  let seed = 20_240_601;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const timePoints: Array<{ date: string; value: number; status: string }> = [];
  const doc = {
    data: [
      {
        id: '310902301',
        metadata: {
          name: 'Gross domestic product: at current prices',
          country: { id: 'CN', name: 'China' },
          frequency: { id: 'Q', name: 'Quarterly' },
          unit: { id: 'RMB bn', name: 'RMB bn' },
          source: { id: '1', name: 'National Bureau of Statistics' },
          lastUpdateTime: '2026-10-20T02:00:00',
        },
        timePoints,
      },
    ],
    errors: [],
  };
  // Track the length as points are added (re-serialising every time would be quadratic).
  let length = JSON.stringify(doc).length;
  let year = 1900;
  let month = 0;
  while (length < bytes) {
    month = (month % 12) + 1;
    if (month === 1) year++;
    const value = Math.round(next() * 10_000_000) / 100;
    const point = { date: `${year}-${String(month).padStart(2, '0')}-28`, value, status: 'final' };
    length += JSON.stringify(point).length + (timePoints.length > 0 ? 1 : 0);
    timePoints.push(point);
  }
  return Buffer.from(JSON.stringify(doc));
}

const cache = new Map<BodySize, Buffer>();

export function payload(size: BodySize): Buffer {
  let b = cache.get(size);
  if (!b) cache.set(size, (b = seriesData(TARGET_BYTES[size])));
  return b;
}

export function md5(body: Buffer | string): string {
  return createHash('md5').update(body).digest('hex');
}

/** The body size a request asks for, from its `size` query parameter (default 2k). Cheap on purpose. */
export function sizeOfUrl(url: string): BodySize {
  return url.includes('size=200k') ? '200k' : '2k';
}
