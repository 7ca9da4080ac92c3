import type { GatewayError } from '../../core/errors/gateway-error.js';
import type { BudgetSource, Take } from './budget-source.js';
import { FairQueue, type FairItem } from './fair-queue.js';

interface Waiter extends FairItem {
  resolve(): void;
  reject(err: GatewayError): void;
  timer?: NodeJS.Timeout;
  /** Handed a token. */
  done?: boolean;
}

export interface TokenDispenserOptions {
  readonly name: string;
  /** The most tokens one take asks for (the burst). */
  readonly burst: number;
  readonly budget: BudgetSource;
  readonly now: () => number;
  /** Reserved share of a consumer's traffic (0 when none). */
  readonly reservedShareOf?: (consumerId: string) => number;
  /** A take found the fleet cooling down. */
  readonly onCooldown: (ms: number, rate: number | undefined) => void;
  /** The refusal for a request of `cost` that cannot get its tokens in time. */
  readonly budgetError: (cost: number) => GatewayError;
  readonly warn?: (message: string) => void;
}

// Timers of the limiter never keep a process alive on their own (the requests waiting on them do).
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Hands tokens to requests: at once while the bucket has them and nobody waits, otherwise in weighted fair
 * order (FairQueue) up to each request's bound. One loop per upstream takes tokens for the waiters in batches
 * (up to the burst) and runs only while someone waits; tokens taken ahead are `prepaid`.
 */
export class TokenDispenser {
  private readonly queue = new FairQueue<Waiter>();
  private prepaid = 0;
  private pumping = false;
  /** A take is on its way to Redis: waiters whose bound passes meanwhile wait for its answer. */
  private taking = false;
  private readonly expiredDuringTake: Waiter[] = [];

  constructor(private readonly o: TokenDispenserOptions) {}

  /** Requests waiting. */
  get size(): number {
    return this.queue.size;
  }

  /** Tokens the waiting requests need. */
  get cost(): number {
    return this.queue.cost;
  }

  /** Resolves (or returns) once `cost` tokens are this request's; rejects when `deadline` passes first. */
  tokens(cost: number, flow: { consumerId: string; weight: number }, deadline: number): Promise<void> | void {
    const now = this.o.now();
    if (this.queue.size === 0) {
      if (this.prepaid >= cost) {
        this.prepaid -= cost;
        return;
      }
      // The local bucket answers synchronously: no queue while there are tokens.
      const r = this.o.budget.tryLocal(cost, now);
      if (r) {
        if (r.granted > 0) return;
        if (now + r.waitMs > deadline) throw this.o.budgetError(cost);
      }
    }
    if (deadline <= now) throw this.o.budgetError(cost);
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { cost, resolve, reject };
      this.queue.push(flow.consumerId, flow.weight, this.o.reservedShareOf?.(flow.consumerId) ?? 0, w);
      w.timer = setTimeout(() => {
        // The bound is on waiting for tokens, not on the round trip that may be fetching one right now.
        if (this.taking) this.expiredDuringTake.push(w);
        else this.expire(w);
      }, deadline - now);
      w.timer.unref();
      this.kick();
    });
  }

  /** Drops tokens taken ahead (a cooldown began: they must not be spent). */
  dropPrepaid(): void {
    this.prepaid = 0;
  }

  /** Refuses everyone waiting (a cooldown, or shutdown). */
  refuseAll(error: () => GatewayError): void {
    for (const w of this.queue.drain()) {
      clearTimeout(w.timer);
      w.reject(error());
    }
  }

  private kick(): void {
    if (this.pumping) return;
    this.pump().catch((e: unknown) =>
      this.o.warn?.(`${this.o.name}: token dispenser failed: ${(e as Error).message}`),
    );
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.queue.size > 0) {
        this.dispatchCovered();
        if (this.queue.size === 0) break;
        const head = this.queue.peek(this.o.now())!;
        const min = head.cost - this.prepaid;
        const want = Math.max(min, Math.min(this.queue.cost, this.o.burst) - this.prepaid);
        this.taking = true;
        let r: Take;
        try {
          r = await this.o.budget.take(want, min);
        } finally {
          this.taking = false;
        }
        if (r.cooldownMs > 0) this.o.onCooldown(r.cooldownMs, r.rate);
        else {
          this.prepaid += r.granted;
          this.dispatchCovered();
        }
        for (const w of this.expiredDuringTake.splice(0)) this.expire(w);
        if (r.cooldownMs > 0) continue;
        if (r.granted === 0 && this.queue.size > 0) await sleep(Math.min(1000, Math.max(1, r.waitMs)));
      }
    } finally {
      this.pumping = false;
    }
  }

  private expire(w: Waiter): void {
    if (!w.done && this.queue.cancel(w)) w.reject(this.o.budgetError(w.cost));
  }

  private dispatchCovered(): void {
    while (this.queue.size > 0) {
      const now = this.o.now();
      const head = this.queue.peek(now)!;
      if (this.prepaid < head.cost) return;
      this.queue.shift(now);
      this.prepaid -= head.cost;
      clearTimeout(head.timer);
      head.done = true;
      head.resolve();
    }
  }
}
