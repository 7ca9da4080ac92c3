/** Something waiting for upstream tokens. The queue annotates it. */
export interface FairItem {
  readonly cost: number;
  /** Virtual finish time (set by the queue). */
  tag?: number;
  /** Removed while waiting (timed out or flushed); skipped lazily. */
  cancelled?: boolean;
}

interface Flow<T extends FairItem> {
  readonly id: string;
  weight: number;
  reserved: number;
  items: T[];
  head: number;
  lastFinish: number;
  /** Exponentially decayed tokens served, for reserved shares. */
  served: number;
  servedAt: number;
  backlogged: boolean;
}

/**
 * Weighted fair queueing of the upstream budget between consumers (self-clocked fair queueing: each item
 * gets a virtual finish tag `max(V, flow's last tag) + cost/weight`; the smallest tag is served next, and V
 * follows the tag in service). While the budget is short, backlogged consumers get tokens in proportion to
 * their weights whatever their request rates, so one app's burst cannot starve the others.
 *
 * A consumer may have a reserved share r: while it is backlogged and has had less than r of the recently
 * served tokens (decayed over `halfLifeMs`), it is served first. The queue is work-conserving: unused
 * weights and reservations go to whoever is waiting. Pure: the caller passes the time.
 */
export class FairQueue<T extends FairItem> {
  private readonly flows = new Map<string, Flow<T>>();
  private readonly active: Flow<T>[] = [];
  private vtime = 0;
  private total = 0;
  private totalAt = 0;
  private count = 0;
  private costSum = 0;

  constructor(private readonly halfLifeMs = 10_000) {}

  /** Items waiting (cancelled ones excluded). */
  get size(): number {
    return this.count;
  }

  /** Tokens the waiting items need. */
  get cost(): number {
    return this.costSum;
  }

  push(flowId: string, weight: number, reserved: number, item: T): void {
    let f = this.flows.get(flowId);
    if (!f) {
      f = {
        id: flowId,
        weight,
        reserved,
        items: [],
        head: 0,
        lastFinish: 0,
        served: 0,
        servedAt: 0,
        backlogged: false,
      };
      this.flows.set(flowId, f);
    }
    f.weight = weight > 0 ? weight : 1;
    f.reserved = reserved > 0 && reserved < 1 ? reserved : 0;
    item.tag = Math.max(this.vtime, f.lastFinish) + item.cost / f.weight;
    f.lastFinish = item.tag;
    f.items.push(item);
    if (!f.backlogged) {
      f.backlogged = true;
      this.active.push(f);
    }
    this.count++;
    this.costSum += item.cost;
  }

  cancel(item: T): boolean {
    if (item.cancelled) return false;
    item.cancelled = true;
    this.count--;
    this.costSum -= item.cost;
    return true;
  }

  /** The item to serve next, without removing it. */
  peek(now: number): T | undefined {
    const f = this.pick(now);
    return f ? f.items[f.head] : undefined;
  }

  /** Removes and returns the item to serve next, and charges its flow. */
  shift(now: number): T | undefined {
    const f = this.pick(now);
    if (!f) return undefined;
    const item = f.items[f.head];
    f.items[f.head] = undefined as unknown as T;
    f.head++;
    this.count--;
    this.costSum -= item.cost;
    if (!this.reservedPick) this.vtime = Math.max(this.vtime, item.tag ?? this.vtime);
    this.charge(f, item.cost, now);
    this.compact(f);
    return item;
  }

  /** Removes every waiting item (a cooldown began), oldest flows first. */
  drain(): T[] {
    const out: T[] = [];
    for (const f of this.active) {
      for (let i = f.head; i < f.items.length; i++) {
        const it = f.items[i];
        if (!it.cancelled) {
          it.cancelled = true;
          out.push(it);
        }
      }
      f.items = [];
      f.head = 0;
      f.backlogged = false;
    }
    this.active.length = 0;
    this.count = 0;
    this.costSum = 0;
    return out;
  }

  /** Recently served tokens per flow (decayed), for tests and diagnostics. */
  servedShares(now: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const f of this.flows.values()) out[f.id] = this.decayed(f.served, f.servedAt, now);
    return out;
  }

  private reservedPick = false;

  private pick(now: number): Flow<T> | undefined {
    // Drop exhausted flows and skip cancelled heads.
    for (let i = this.active.length - 1; i >= 0; i--) {
      const f = this.active[i];
      while (f.head < f.items.length && f.items[f.head].cancelled) f.head++;
      if (f.head >= f.items.length) {
        f.items = [];
        f.head = 0;
        f.backlogged = false;
        this.active.splice(i, 1);
      }
    }
    if (this.active.length === 0) return undefined;
    // A backlogged flow below its reserved share goes first (the most deficient one).
    let best: Flow<T> | undefined;
    let bestDeficit = 0;
    const total = this.decayed(this.total, this.totalAt, now);
    for (const f of this.active) {
      if (f.reserved === 0) continue;
      const deficit = f.reserved * total - this.decayed(f.served, f.servedAt, now);
      if (deficit > bestDeficit) {
        bestDeficit = deficit;
        best = f;
      }
    }
    this.reservedPick = best !== undefined;
    if (best) return best;
    let minTag = Infinity;
    for (const f of this.active) {
      const tag = f.items[f.head].tag ?? 0;
      if (tag < minTag) {
        minTag = tag;
        best = f;
      }
    }
    return best;
  }

  private charge(f: Flow<T>, cost: number, now: number): void {
    f.served = this.decayed(f.served, f.servedAt, now) + cost;
    f.servedAt = now;
    this.total = this.decayed(this.total, this.totalAt, now) + cost;
    this.totalAt = now;
  }

  private decayed(value: number, at: number, now: number): number {
    if (value === 0 || now <= at) return value;
    return value * Math.pow(0.5, (now - at) / this.halfLifeMs);
  }

  private compact(f: Flow<T>): void {
    // Keep the FIFO array from growing without bound under steady load.
    if (f.head > 64 && f.head * 2 > f.items.length) {
      f.items = f.items.slice(f.head);
      f.head = 0;
    }
  }
}
