/**
 * Full-jitter exponential backoff (AWS Architecture Blog, "Exponential Backoff and Jitter"): a delay drawn
 * uniformly from [0, min(cap, base·2^(attempt-1))). `attempt` is the retry number, from 1.
 */
export function fullJitterDelayMs(
  attempt: number,
  baseMs: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}
