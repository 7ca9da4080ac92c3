import fc from 'fast-check';
import { ByteLruStore } from '../../src/proxy/cache/byte-lru.store.js';
import { decodeEntry, encodeEntry, entryBytes, type CacheEntry } from '../../src/proxy/cache/cache-entry.js';
import type { CacheKey } from '../../src/proxy/cache/cache-key.js';
import { MemoryResponseStore } from '../../src/proxy/cache/memory-response.store.js';

const sized = (bytes: number) => ({ value: { size: bytes } });

describe('ByteLruStore', () => {
  const store = (maxBytes: number) =>
    new ByteLruStore({ maxBytes, sizeOf: (d) => (d as { value: { size: number } }).value.size });

  it('is bounded by bytes, not entries: one big value evicts many small ones, oldest first', async () => {
    const lru = store(10_000);
    for (let i = 0; i < 20; i++) await lru.set(`k${i}`, sized(100));
    expect(lru.size).toBe(20);
    await lru.set('big', sized(8_000));
    expect(lru.bytes).toBeLessThanOrEqual(10_000);
    expect(await lru.has('big')).toBe(true);
    expect(await lru.has('k0')).toBe(false);
    expect(await lru.has('k19')).toBe(true);
  });

  it('a read makes a key most recently used', async () => {
    const lru = store(1_000);
    await lru.set('a', sized(200));
    await lru.set('b', sized(200));
    await lru.get('a');
    await lru.set('c', sized(450));
    // b was least recently used (a was read after it): b goes, a stays.
    expect(lru.keys()).toEqual(['a', 'c']);
  });

  it('a hot key moves to the back at most once a second (recency to the second: no Map churn per hit)', async () => {
    const lru = store(1_000);
    await lru.set('a', sized(200));
    await lru.set('b', sized(200));
    await lru.get('a'); // first read: moves
    await lru.get('b'); // first read: moves
    await lru.get('a'); // read again within the second: stays where it is
    expect(lru.keys()).toEqual(['a', 'b']);
  });

  it('refuses a value larger than the whole cap, and replacing a key frees its old bytes', async () => {
    const lru = store(1_000);
    expect(await lru.set('huge', sized(5_000))).toBe(false);
    expect(lru.size).toBe(0);
    await lru.set('a', sized(500));
    const before = lru.bytes;
    await lru.set('a', sized(100));
    expect(lru.bytes).toBe(before - 400);
    expect(await lru.delete('a')).toBe(true);
    expect(lru.bytes).toBe(0);
  });

  it('evicts in least-recently-used order through any mix of writes, first reads, deletes and clears', async () => {
    // The evictor is one iterator kept between evictions; a model LRU (an array, oldest first) checks that
    // it never skips, repeats or reorders a key. Only first reads are made: they always move the key.
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        key: fc.integer({ min: 0, max: 30 }),
        size: fc.integer({ min: 1, max: 400 }),
      }),
      fc.record({ kind: fc.constant('read' as const), key: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ kind: fc.constant('clear' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 300 }), async (ops) => {
        const lru = store(1_000);
        let model: { key: string; bytes: number }[] = [];
        const read = new Set<string>();
        const cost = (key: string, size: number) => size + key.length * 2 + 96;
        for (const o of ops) {
          if (o.kind === 'clear') {
            await lru.clear();
            model = [];
            read.clear();
            continue;
          }
          const key = `k${o.key}`;
          if (o.kind === 'set') {
            await lru.set(key, sized(o.size));
            model = model.filter((e) => e.key !== key);
            read.delete(key);
            const bytes = cost(key, o.size);
            if (bytes <= 1_000) {
              model.push({ key, bytes });
              let used = model.reduce((n, e) => n + e.bytes, 0);
              while (used > 1_000) used -= model.shift()!.bytes;
            }
          } else if (o.kind === 'read') {
            const i = model.findIndex((e) => e.key === key);
            if (i === -1 || read.has(key)) continue;
            read.add(key);
            expect(await lru.get(key)).toBeDefined();
            model.push(...model.splice(i, 1));
          } else {
            await lru.delete(key);
            model = model.filter((e) => e.key !== key);
            read.delete(key);
          }
          expect(lru.keys()).toEqual(model.map((e) => e.key));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('sweeps expired values', async () => {
    const lru = store(10_000);
    await lru.set('old', { value: { size: 1 }, expires: 1_000 });
    await lru.set('new', { value: { size: 1 }, expires: 5_000 });
    await lru.set('forever', { value: { size: 1 } });
    expect(lru.sweepExpired(2_000)).toBe(1);
    expect(lru.keys()).toEqual(['new', 'forever']);
  });
});

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

  it('never stores an entry bigger than its byte cap', async () => {
    const small = new MemoryResponseStore({ maxBytes: 2048 });
    const big = entry('x'.repeat(4096));
    expect(entryBytes(big)).toBeGreaterThan(2048);
    expect(await small.set(key('macro:c:feeds'), big, 60_000, '0', false)).toBe(false);
    await small.close();
  });
});
