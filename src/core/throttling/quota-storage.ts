import type { ThrottlerStorage } from '@nestjs/throttler';

/** One of a consumer's quota windows, e.g. 20 per second or 600 per minute. */
export interface QuotaWindow {
  readonly name: string;
  readonly ttlMs: number;
  readonly limit: number;
}

export interface QuotaWindowState {
  /** Requests counted in this window, this one included when it was allowed. */
  readonly hits: number;
  /** Milliseconds until the window starts afresh. */
  readonly resetMs: number;
}

export interface QuotaVerdict {
  readonly allowed: boolean;
  /** One entry per window, in the order they were given. */
  readonly windows: readonly QuotaWindowState[];
}

/**
 * A throttler storage that counts one request against all of a consumer's windows in one step, all or
 * nothing: a request refused by one window is counted by none, so a burst refused per second does not burn
 * the per-minute quota. O(1) per window. `undefined` means the storage is unavailable (the guard fails open).
 */
export interface MultiWindowThrottlerStorage extends ThrottlerStorage {
  /** `keys[i]` names window `windows[i]`; callers pass the same arrays for the same consumer every time. */
  hitAll(
    keys: readonly string[],
    windows: readonly QuotaWindow[],
  ): QuotaVerdict | undefined | Promise<QuotaVerdict | undefined>;
}

export function isMultiWindowStorage(s: ThrottlerStorage): s is MultiWindowThrottlerStorage {
  return typeof (s as Partial<MultiWindowThrottlerStorage>).hitAll === 'function';
}

/** What `ThrottlerStorage.increment` answers (the package does not export the type by name). */
export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** The stock `ThrottlerStorage.increment` contract on top of `hitAll` (one window). */
export function recordOf(verdict: QuotaVerdict): ThrottlerStorageRecord {
  const w = verdict.windows[0];
  const seconds = Math.max(0, Math.ceil(w.resetMs / 1000));
  return {
    totalHits: verdict.allowed ? w.hits : w.hits + 1,
    timeToExpire: seconds,
    isBlocked: !verdict.allowed,
    timeToBlockExpire: verdict.allowed ? 0 : seconds,
  };
}
