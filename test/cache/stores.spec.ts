import { decodeEntry, encodeEntry, entryBytes, type CacheEntry } from '../../src/proxy/cache/cache-entry.js';
import type { CacheKey } from '../../src/proxy/cache/cache-key.js';
import { MemoryResponseStore } from '../../src/proxy/cache/memory-response.store.js';

describe('entry encoding for Redis', () => {
  const entry: CacheEntry = {
    id: 'abc1',
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', etag: '"x\ty"' },
    body: Buffer.from([0, 1, 2, 255, 0x7b, 0x0a, 0x7d]),
    storedAt: 1_700_000_000_000,
    freshUntil: 1_700_000_030_000,
  };

  it('round-trips status, headers, times and binary bodies byte for byte', () => {
    const back = decodeEntry(encodeEntry(entry))!;
    expect(back).toMatchObject({
      id: 'abc1',
      status: 200,
      storedAt: entry.storedAt,
      freshUntil: entry.freshUntil,
    });
    expect(back.headers).toEqual(entry.headers);
    expect(back.body.equals(entry.body)).toBe(true);
    const negative = {
      ...entry,
      status: 404,
      body: Buffer.alloc(0),
      negative: { code: 'NOT_FOUND' as const, message: 'gone' },
    };
    expect(decodeEntry(encodeEntry(negative))?.negative).toEqual({ code: 'NOT_FOUND', message: 'gone' });
  });

  it('treats anything else as a miss', () => {
    expect(decodeEntry('{"value":1}')).toBeUndefined();
    expect(decodeEntry('A1\nid\nnot-a-status\n')).toBeUndefined();
    expect(decodeEntry('')).toBeUndefined();
  });
});

describe('MemoryResponseStore', () => {
  const key = (scope: string, path = '/feeds'): CacheKey => {
    const hash = (scope + path)
      .padEnd(32, '0')
      .slice(0, 32)
      .replace(/[^0-9a-z]/g, '0');
    return {
      scope,
      upstream: scope.split(':')[0],
      hash,
      path,
      full: `${scope}:${hash}:${path}`,
      lockId: `${scope}:${hash}`,
    };
  };
  const entry = (body: string): CacheEntry => ({
    id: body,
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(body),
    storedAt: Date.now(),
    freshUntil: Date.now() + 60_000,
  });
  let store: MemoryResponseStore;
  beforeEach(() => (store = new MemoryResponseStore({ maxBytes: 1024 * 1024 })));
  afterEach(() => store.close());

  it('hands out the stored Buffer itself on a hit (no copy)', async () => {
    const k = key('macro:c:feeds');
    const e = entry('{"data":[]}');
    const role = await store.beginMiss(k);
    expect(role.role).toBe('local');
    expect(await store.set(k, e, 60_000, role.role === 'local' ? role.token : undefined, true)).toBe(true);
    expect((await store.get(k))?.body).toBe(e.body);
  });

  it('invalidates a scope in O(1), and drops a store that raced a write', async () => {
    const k = key('macro:c:feeds');
    const other = key('macro:c:layout', '/layout/x');
    const t1 = (await store.beginMiss(k)) as { token: string };
    const t2 = (await store.beginMiss(other)) as { token: string };
    await store.set(k, entry('a'), 60_000, t1.token, true);
    await store.set(other, entry('b'), 60_000, t2.token, false);
    const inFlight = (await store.beginMiss(k)) as { token: string };
    await store.invalidate('macro:c:feeds');
    expect(await store.get(k)).toBeUndefined();
    expect(await store.get(other)).toBeDefined();
    // An answer whose call started before the write is never stored.
    expect(await store.set(k, entry('stale'), 60_000, inFlight.token, true)).toBe(false);
    expect(await store.get(k)).toBeUndefined();
  });

  it('purges by upstream and by path prefix', async () => {
    const keys = [
      key('macro:c:feeds', '/feeds'),
      key('macro:c:feeds', '/feeds/FD-1'),
      key('macro:c:layout', '/layout/tables/TB1'),
      key('company:c:feeds', '/companies/feeds'),
    ];
    for (const k of keys) await store.set(k, entry(k.path), 60_000, '0', false);
    expect(await store.purge('macro', '/feeds')).toBe(2);
    expect(await store.get(keys[2])).toBeDefined();
    expect(await store.purge('macro')).toBe(1);
    expect(await store.get(keys[3])).toBeDefined();
  });

  it('is bounded by bytes, not entries: one big entry evicts the least recently used small ones', async () => {
    const capped = new MemoryResponseStore({ maxBytes: 8 * 1024 });
    const keys = Array.from({ length: 10 }, (_, i) => key('macro:c:feeds', `/feeds/FD-${i}`));
    for (const k of keys) expect(await capped.set(k, entry('x'.repeat(200)), 60_000, '0', false)).toBe(true);
    expect((await capped.stats()).entries).toBe(10);
    // A read makes FD-0 the most recently used: FD-1 is now the oldest.
    expect(capped.getSync(keys[0])).toBeDefined();
    const big = key('macro:c:feeds', '/feeds/BIG');
    expect(await capped.set(big, entry('y'.repeat(6 * 1024)), 60_000, '0', false)).toBe(true);
    const stats = await capped.stats();
    expect(stats.bytes as number).toBeLessThanOrEqual(8 * 1024);
    expect(capped.getSync(big)).toBeDefined();
    expect(capped.getSync(keys[0])).toBeDefined();
    expect(capped.getSync(keys[1])).toBeUndefined();
    expect(capped.getSync(keys[9])).toBeDefined();
    await capped.close();
  });

  it('drops an entry once its retention has passed, on the clock it is given', async () => {
    let now = 1_000_000;
    const timed = new MemoryResponseStore({ maxBytes: 1024 * 1024, clock: { now: () => now } });
    const k = key('macro:c:feeds');
    await timed.set(k, entry('a'), 5_000, '0', false);
    now += 4_999;
    expect(timed.getSync(k)).toBeDefined();
    now += 2;
    expect(timed.getSync(k)).toBeUndefined();
    expect((await timed.stats()).entries).toBe(0);
    await timed.close();
  });

  it('never stores an entry bigger than its byte cap', async () => {
    const small = new MemoryResponseStore({ maxBytes: 2048 });
    const big = entry('x'.repeat(4096));
    expect(entryBytes(big)).toBeGreaterThan(2048);
    expect(await small.set(key('macro:c:feeds'), big, 60_000, '0', false)).toBe(false);
    await small.close();
  });
});
