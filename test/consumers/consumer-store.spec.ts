import type { Consumer } from '../../src/core/auth/consumer.js';
import { ConsumerStore, sha256 } from '../../src/core/auth/consumer-store.service.js';
import { FakeClock } from '../helpers/fake-clock.js';

const consumer = (id: string, keys: Array<{ key: string; expiresAt?: number }>): Consumer => ({
  id,
  keyHashes: keys.map((k) => sha256(k.key)),
  keys: keys.map((k, i) => ({ id: `${id}-${i}`, hash: sha256(k.key), expiresAt: k.expiresAt })),
  upstreams: new Set(['macro']),
  write: false,
  limits: [],
  weight: 1,
  reservedShare: 0,
  corsOrigins: [],
});

describe('ConsumerStore', () => {
  it('accepts every key of a rotation until its expiresAt passes, then only the others', async () => {
    const clock = new FakeClock();
    const store = new ConsumerStore(
      [
        consumer('app', [
          { key: 'atr_old_key_1', expiresAt: clock.now() + 60_000 },
          { key: 'atr_new_key_1' },
        ]),
      ],
      clock,
    );
    expect(store.authenticate('atr_old_key_1')?.id).toBe('app');
    expect(store.authenticate('atr_new_key_1')?.id).toBe('app');
    await clock.advance(59_999);
    expect(store.authenticate('atr_old_key_1')?.id).toBe('app');
    await clock.advance(1);
    expect(store.authenticate('atr_old_key_1')).toBeUndefined();
    expect(store.authenticate('atr_new_key_1')?.id).toBe('app');
    expect(store.authenticate('atr_unknown')).toBeUndefined();
  });

  it('replaces the whole set at once and tells its listeners', () => {
    const store = new ConsumerStore([consumer('a', [{ key: 'atr_a_key_1' }])]);
    const seen: string[][] = [];
    const off = store.onChange((all) => seen.push(all.map((c) => c.id)));
    store.replace([consumer('b', [{ key: 'atr_b_key_1' }])]);
    expect(store.authenticate('atr_a_key_1')).toBeUndefined();
    expect(store.authenticate('atr_b_key_1')?.id).toBe('b');
    expect(store.get('a')).toBeUndefined();
    expect(seen).toEqual([['b']]);
    off();
    store.replace([]);
    expect(seen).toHaveLength(1);
  });

  it('finds a disabled consumer (the guard answers 403 for it, not 401)', () => {
    const store = new ConsumerStore([{ ...consumer('off', [{ key: 'atr_off_key_1' }]), enabled: false }]);
    expect(store.authenticate('atr_off_key_1')?.enabled).toBe(false);
  });

  it('a connection that presents the same key again skips the hash, but every check still runs', async () => {
    const clock = new FakeClock();
    const store = new ConsumerStore(
      [consumer('a', [{ key: 'atr_a_key_1', expiresAt: clock.now() + 1_000 }, { key: 'atr_a_key_2' }])],
      clock,
    );
    const socket = {};
    expect(store.authenticate('atr_a_key_1', socket)?.id).toBe('a');
    expect(store.authenticate('atr_a_key_1', socket)?.id).toBe('a');
    // Another key of the same length on the same connection is not taken for the remembered one.
    expect(store.authenticate('atr_a_key_3', socket)).toBeUndefined();
    expect(store.authenticate('atr_a_key_2', socket)?.id).toBe('a');
    expect(store.authenticate('atr_a_key_1', socket)?.id).toBe('a');
    // Expiry and a reload apply to a remembered key at once.
    await clock.advance(1_000);
    expect(store.authenticate('atr_a_key_1', socket)).toBeUndefined();
    expect(store.authenticate('atr_a_key_2', socket)?.id).toBe('a');
    store.replace([consumer('b', [{ key: 'atr_b_key_1' }])]);
    expect(store.authenticate('atr_a_key_2', socket)).toBeUndefined();
    expect(store.authenticate('atr_b_key_1', socket)?.id).toBe('b');
  });
});
