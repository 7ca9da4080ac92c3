/**
 * The value under `key` in `memo`, made by `make` the first time; the memo keeps at most `max` values (the
 * oldest made goes first). For request-path memos whose keys come from callers: bounded, never a leak.
 */
export function memoised<K, V>(memo: Map<K, V>, key: K, max: number, make: () => V): V {
  let value = memo.get(key);
  if (value === undefined) {
    value = make();
    if (memo.size >= max) memo.delete(memo.keys().next().value as K);
    memo.set(key, value);
  }
  return value;
}
