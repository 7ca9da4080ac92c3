import { FairQueue, type FairItem } from '../../src/proxy/limits/fair-queue.js';

interface Item extends FairItem {
  flow: string;
}

/** Keeps every flow backlogged and serves `n` tokens; returns how many each flow got. */
function serve(
  q: FairQueue<Item>,
  flows: Array<{ id: string; weight: number; reserved?: number; depth: number }>,
  n: number,
): Record<string, number> {
  const got: Record<string, number> = Object.fromEntries(flows.map((f) => [f.id, 0]));
  const waiting: Record<string, number> = Object.fromEntries(flows.map((f) => [f.id, 0]));
  let t = 1_000_000;
  for (let i = 0; i < n; i++) {
    for (const f of flows)
      while (waiting[f.id] < f.depth) {
        q.push(f.id, f.weight, f.reserved ?? 0, { cost: 1, flow: f.id });
        waiting[f.id]++;
      }
    const item = q.shift((t += 10))!;
    got[item.flow]++;
    waiting[item.flow]--;
  }
  return got;
}

describe('weighted fair queue', () => {
  it('equal weights: a flow with 10× the waiting requests gets the same share', () => {
    const got = serve(
      new FairQueue<Item>(),
      [
        { id: 'noisy', weight: 1, depth: 30 },
        { id: 'quiet', weight: 1, depth: 3 },
      ],
      1000,
    );
    expect(got.noisy).toBe(500);
    expect(got.quiet).toBe(500);
  });

  it('shares follow the weights', () => {
    const got = serve(
      new FairQueue<Item>(),
      [
        { id: 'a', weight: 1, depth: 50 },
        { id: 'b', weight: 3, depth: 5 },
      ],
      1000,
    );
    expect(got.b / got.a).toBeCloseTo(3, 1);
  });

  it('a reserved share is honoured even against a heavier weight', () => {
    const got = serve(
      new FairQueue<Item>(),
      [
        { id: 'big', weight: 9, depth: 50 },
        { id: 'reserved', weight: 1, reserved: 0.4, depth: 5 },
      ],
      1000,
    );
    // Weights alone would give 10 %.
    expect(got.reserved / 1000).toBeGreaterThanOrEqual(0.39);
    expect(got.reserved / 1000).toBeLessThan(0.45);
  });

  it('is work-conserving: an idle flow’s share goes to whoever waits', () => {
    const q = new FairQueue<Item>();
    for (let i = 0; i < 5; i++) q.push('a', 1, 0.5, { cost: 1, flow: 'a' });
    const flows: string[] = [];
    for (let i = 0; i < 5; i++) flows.push(q.shift(1000 + i)!.flow);
    expect(flows).toEqual(['a', 'a', 'a', 'a', 'a']);
    expect(q.shift(2000)).toBeUndefined();
  });

  it('weights tokens, not requests: costlier requests count for more', () => {
    const q = new FairQueue<Item>();
    const got: Record<string, number> = { heavy: 0, light: 0 };
    const waiting: Record<string, number> = { heavy: 0, light: 0 };
    for (let t = 0; t < 400; t++) {
      for (const [flow, cost] of [
        ['heavy', 4],
        ['light', 1],
      ] as const)
        while (waiting[flow] < 10) {
          q.push(flow, 1, 0, { cost, flow });
          waiting[flow]++;
        }
      const it = q.shift(t)!;
      got[it.flow] += it.cost;
      waiting[it.flow]--;
    }
    expect(got.heavy / got.light).toBeGreaterThan(0.9);
    expect(got.heavy / got.light).toBeLessThan(1.1);
  });

  it('a newcomer is not starved by an old backlog, and gets no credit for having been idle', () => {
    const q = new FairQueue<Item>();
    for (let i = 0; i < 100; i++) q.push('old', 1, 0, { cost: 1, flow: 'old' });
    for (let i = 0; i < 50; i++) q.shift(i);
    for (let i = 0; i < 10; i++) q.push('new', 1, 0, { cost: 1, flow: 'new' });
    const next = Array.from({ length: 10 }, (_, i) => q.shift(100 + i)!.flow);
    expect(next.filter((f) => f === 'new').length).toBe(5);
  });

  it('cancelled items are skipped and not counted', () => {
    const q = new FairQueue<Item>();
    const a: Item = { cost: 2, flow: 'a' };
    const b: Item = { cost: 1, flow: 'a' };
    q.push('a', 1, 0, a);
    q.push('a', 1, 0, b);
    expect(q.cost).toBe(3);
    expect(q.cancel(a)).toBe(true);
    expect(q.cancel(a)).toBe(false);
    expect(q.size).toBe(1);
    expect(q.cost).toBe(1);
    expect(q.shift(0)).toBe(b);
    expect(q.size).toBe(0);
  });

  it('drain empties the queue and returns what waited', () => {
    const q = new FairQueue<Item>();
    for (let i = 0; i < 3; i++) q.push('a', 1, 0, { cost: 1, flow: 'a' });
    q.push('b', 1, 0, { cost: 1, flow: 'b' });
    expect(q.drain()).toHaveLength(4);
    expect(q.size).toBe(0);
    expect(q.peek(0)).toBeUndefined();
  });
});
