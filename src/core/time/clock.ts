/** A timer handle as the clock hands it out; only the clock that made it can cancel it. */
export type ClockTimer = { unref?(): unknown } | number | object;

/**
 * Time as a dependency: components whose behaviour depends on time take a Clock, so unit tests drive them
 * with a fake one (test/helpers/fake-clock.ts) and assert exact outcomes instead of sleeping.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs `fn` once after `ms`; the timer never keeps the process alive. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};
