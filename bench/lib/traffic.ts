// The fleet scenario's recorded traffic: generated once from a seed, then replayed to each fleet, so both
// see exactly the same requests at the same offsets. Hand-written: a seeded PRNG, a Zipf table and a
// greedy count are a few lines each, and no kept library draws Zipf samples.

export interface TrafficOptions {
  /** Distinct series (the Zipf universe). */
  readonly keys: number;
  /** Zipf exponent. */
  readonly zipfS: number;
  /** Steady requests per second (Poisson arrivals). */
  readonly ratePerS: number;
  /** Seconds of traffic. */
  readonly durationS: number;
  /** A release every this many seconds: `burstClients` clients ask for one new series within `burstSpreadMs`. */
  readonly burstEveryS: number;
  readonly burstClients: number;
  readonly burstSpreadMs: number;
  /** Consumers the requests are spread over. */
  readonly consumers: number;
  readonly seed: number;
}

/**
 * Spellings of one request the vendor answers identically: the plain query, its parameters in another
 * order, the stated default `lang=en` added, and the language as the `Accept-Language` header instead.
 */
export const VARIANTS = ['plain', 'order', 'lang', 'header'] as const;
export type Variant = (typeof VARIANTS)[number];
const VARIANT_SHARE: Record<Variant, number> = { plain: 0.55, order: 0.15, lang: 0.15, header: 0.15 };

export interface TrafficRequest {
  /** Offset from the start, ms. */
  readonly t: number;
  /** The series asked for: one key for every spelling (what a canonical cache can share). */
  readonly key: string;
  /** The URL asked for: what a cache keyed by URL (nginx) shares. */
  readonly path: string;
  readonly variant: Variant;
  readonly consumer: number;
  /** Part of a release burst. */
  readonly burst: boolean;
}

/** mulberry32: a small seeded PRNG, so the traffic is the same on every run and for every fleet. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function zipfSampler(n: number, s: number, rand: () => number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / Math.pow(k + 1, s);
  return () => {
    const u = rand() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export function requestPath(series: string, variant: Variant): string {
  const base = `/macro/series/${series}/data`;
  switch (variant) {
    case 'order':
      return `${base}?count=40&start_date=2015-01-01`;
    case 'lang':
      return `${base}?start_date=2015-01-01&count=40&lang=en`;
    default:
      return `${base}?start_date=2015-01-01&count=40`;
  }
}

export function generateTraffic(o: TrafficOptions): TrafficRequest[] {
  const rand = prng(o.seed);
  const zipf = zipfSampler(o.keys, o.zipfS, rand);
  const variant = (): Variant => {
    let u = rand();
    for (const v of VARIANTS) if ((u -= VARIANT_SHARE[v]) < 0) return v;
    return 'plain';
  };
  const end = o.durationS * 1000;
  const out: TrafficRequest[] = [];
  const add = (t: number, key: string, burst: boolean) => {
    const v = variant();
    out.push({
      t,
      key,
      path: requestPath(key, v),
      variant: v,
      consumer: Math.floor(rand() * o.consumers),
      burst,
    });
  };
  for (
    let t = -Math.log(1 - rand()) * (1000 / o.ratePerS);
    t < end;
    t += -Math.log(1 - rand()) * (1000 / o.ratePerS)
  )
    add(Math.round(t * 10) / 10, `S${100_000 + zipf()}`, false);
  if (o.burstEveryS > 0)
    for (let i = 0, at = o.burstEveryS * 500; at < end; i++, at += o.burstEveryS * 1000)
      for (let c = 0; c < o.burstClients; c++)
        add(Math.round((at + rand() * o.burstSpreadMs) * 10) / 10, `R${200_000 + i}`, true);
  return out.sort((a, b) => a.t - b.t);
}

/** The key a URL-keyed cache sees: the header spelling is the plain URL. */
export function urlKey(r: TrafficRequest): string {
  return r.path;
}

/**
 * The fewest vendor calls any cache with this TTL could make for these requests: per key, a call at its
 * first request, then one at the first request at least a TTL after the previous call (the number of TTL
 * windows in which the key was asked for, each window opened by a request). Returns the calls' times.
 */
export function minimumCalls(
  requests: readonly TrafficRequest[],
  ttlMs: number,
  keyOf: (r: TrafficRequest) => string = (r) => r.key,
  untilMs = Infinity,
): number[] {
  const last = new Map<string, number>();
  const times: number[] = [];
  for (const r of requests) {
    if (r.t >= untilMs) break;
    const k = keyOf(r);
    const prev = last.get(k);
    if (prev === undefined || r.t >= prev + ttlMs) {
      last.set(k, r.t);
      times.push(r.t);
    }
  }
  return times;
}
