import type { BodySize } from './payloads.js';
import type { ServerId } from './servers.js';

/**
 * static: the ceiling; hit: one key asked again and again; miss: a new key on every request (the cache
 * cannot help); storm: new keys while the upstream answers 429 (Atrium should be in cooldown).
 */
export type LoadKind = 'static' | 'hit' | 'miss' | 'storm';

export interface LoadScenario {
  readonly id: string;
  readonly title: string;
  readonly server: ServerId;
  readonly kind: LoadKind;
  readonly size: BodySize;
  /** Latency of the fake upstream for this scenario's requests. */
  readonly delayMs: number;
  readonly expectStatus: 200 | 429;
  /** A composite view (bench/views.bench.yaml) instead of one proxied route: its answer is not the payload. */
  readonly view?: string;
}

export interface BurstScenario {
  readonly id: string;
  readonly title: string;
  readonly server: ServerId;
  readonly delayMs: number;
  /**
   * A client without the payload fails the run (Atrium). For the baseline it is a finding, reported but not
   * a harness failure: the naive proxy's axios timeout (5 s, from the docs' example) can expire in the burst.
   */
  readonly failuresAreFindings: boolean;
}

/** Run in this order, round-robin, every round. */
export const LOAD_SCENARIOS = [
  {
    id: 'ceiling-2k',
    title: 'ceiling, 2 KB',
    server: 'ceiling',
    kind: 'static',
    size: '2k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'ceiling-200k',
    title: 'ceiling, 200 KB',
    server: 'ceiling',
    kind: 'static',
    size: '200k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'bare-miss-2k-0ms',
    title: 'bare proxy, 2 KB, upstream 0 ms',
    server: 'bare',
    kind: 'miss',
    size: '2k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'bare-miss-2k-20ms',
    title: 'bare proxy, 2 KB, upstream 20 ms',
    server: 'bare',
    kind: 'miss',
    size: '2k',
    delayMs: 20,
    expectStatus: 200,
  },
  {
    id: 'bare-miss-200k-0ms',
    title: 'bare proxy, 200 KB, upstream 0 ms',
    server: 'bare',
    kind: 'miss',
    size: '200k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'naive-hit-2k',
    title: 'naive Nest proxy, cache hit, 2 KB',
    server: 'naive-hit',
    kind: 'hit',
    size: '2k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'naive-hit-200k',
    title: 'naive Nest proxy, cache hit, 200 KB',
    server: 'naive-hit',
    kind: 'hit',
    size: '200k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'naive-miss-2k-0ms',
    title: 'naive Nest proxy, miss, 2 KB, upstream 0 ms',
    server: 'naive-miss',
    kind: 'miss',
    size: '2k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'naive-miss-2k-20ms',
    title: 'naive Nest proxy, miss, 2 KB, upstream 20 ms',
    server: 'naive-miss',
    kind: 'miss',
    size: '2k',
    delayMs: 20,
    expectStatus: 200,
  },
  {
    id: 'naive-miss-200k-0ms',
    title: 'naive Nest proxy, miss, 200 KB, upstream 0 ms',
    server: 'naive-miss',
    kind: 'miss',
    size: '200k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'atrium-hit-2k',
    title: 'Atrium, cache hit, 2 KB',
    server: 'atrium-hit',
    kind: 'hit',
    size: '2k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    // Side by side with atrium-hit-2k, in its own process with the same (only) workload: what usage
    // counting per consumer costs a hit.
    id: 'atrium-hit-plain-2k',
    title: 'Atrium, cache hit, 2 KB, usage counting off',
    server: 'atrium-hit-plain',
    kind: 'hit',
    size: '2k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'atrium-view-hit-4x2k',
    title: 'Atrium, view of 4 parts, every part a cache hit, 2 KB each',
    server: 'atrium-view',
    kind: 'hit',
    size: '2k',
    delayMs: 0,
    expectStatus: 200,
    view: 'bench-four',
  },
  {
    id: 'atrium-hit-200k',
    title: 'Atrium, cache hit, 200 KB',
    server: 'atrium-view',
    kind: 'hit',
    size: '200k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    // The peer a user would otherwise pick for the hit: nginx's proxy_cache, which authenticates, counts,
    // logs and measures nothing. Reported beside Atrium's hit, no target (skipped when nginx is missing).
    id: 'nginx-hit-2k',
    title: 'nginx proxy_cache, cache hit, 2 KB (no auth)',
    server: 'nginx-hit',
    kind: 'hit',
    size: '2k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'atrium-miss-2k-0ms',
    title: 'Atrium, miss, 2 KB, upstream 0 ms',
    server: 'atrium-miss',
    kind: 'miss',
    size: '2k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'atrium-miss-2k-20ms',
    title: 'Atrium, miss, 2 KB, upstream 20 ms',
    server: 'atrium-miss',
    kind: 'miss',
    size: '2k',
    delayMs: 20,
    expectStatus: 200,
  },
  {
    id: 'atrium-miss-200k-0ms',
    title: 'Atrium, miss, 200 KB, upstream 0 ms',
    server: 'atrium-miss',
    kind: 'miss',
    size: '200k',
    delayMs: 0,
    expectStatus: 200,
  },
  {
    id: 'atrium-storm-2k',
    title: 'Atrium, 429 storm (upstream in cooldown)',
    server: 'atrium-storm',
    kind: 'storm',
    size: '2k',
    delayMs: 0,
    expectStatus: 429,
  },
] as const satisfies readonly LoadScenario[];

/** Latency of the fake for the burst: long enough that all clients are waiting before it answers. */
export const BURST_DELAY_MS = 100;

export const BURST_SCENARIOS = [
  {
    id: 'atrium-burst',
    title: 'Atrium, coalesced burst on one cold key',
    server: 'atrium-miss',
    delayMs: BURST_DELAY_MS,
    failuresAreFindings: false,
  },
  {
    id: 'naive-burst',
    title: 'naive Nest proxy, burst on one cold key',
    server: 'naive-miss',
    delayMs: BURST_DELAY_MS,
    failuresAreFindings: true,
  },
] as const satisfies readonly BurstScenario[];

export type LoadScenarioId = (typeof LOAD_SCENARIOS)[number]['id'];

export function ceilingOf(s: LoadScenario): LoadScenarioId {
  return s.size === '200k' ? 'ceiling-200k' : 'ceiling-2k';
}

function query(size: BodySize, delayMs: number): string {
  return `?size=${size}&delay=${delayMs}`;
}

let seq = 0;

/** The request path of a run: one fixed key (static, hit) or a fresh key per request (miss, storm). */
export function pathFor(s: LoadScenario, tag: string): string | (() => string) {
  const q = query(s.size, s.delayMs);
  if (s.view) return `/views/${s.view}`;
  if (s.kind === 'static' || s.kind === 'hit') return `/macro/series/310902301${s.size}/data${q}`;
  return () => `/macro/series/${tag}-${(seq++).toString(36)}/data${q}`;
}

export function burstPath(b: BurstScenario, tag: string): string {
  return `/macro/series/burst-${tag}/data${query('2k', b.delayMs)}`;
}

/** The fleet scenario's id in BENCH_SCENARIOS. */
export const FLEET_ID = 'fleet';

/**
 * Scenarios whose id starts with one of `only` (all when empty); the ceilings they are compared with are
 * added. `fleet`: whether the fleet scenario runs.
 */
export function selectScenarios(only: readonly string[]): {
  load: LoadScenario[];
  bursts: BurstScenario[];
  fleet: boolean;
} {
  const pick = (id: string) => only.length === 0 || only.some((p) => id.startsWith(p));
  const load: LoadScenario[] = LOAD_SCENARIOS.filter((s) => pick(s.id));
  const bursts: BurstScenario[] = BURST_SCENARIOS.filter((s) => pick(s.id));
  const needed = new Set<string>(load.map((s) => ceilingOf(s)));
  if (bursts.length && load.length === 0) needed.add('ceiling-2k');
  const withCeilings = LOAD_SCENARIOS.filter((s) => needed.has(s.id) || load.includes(s));
  return { load: withCeilings, bursts, fleet: pick(FLEET_ID) };
}
