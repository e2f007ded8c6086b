/**
 * Group commit (docs/design.md, "Group commit"): writes that arrive while one is in flight wait for
 * it and then go together, as one write of many items. The first write of a quiet moment goes at
 * once (no timer, no added latency); under load, the more writes wait, the more each commit carries,
 * so round trips and commits per item fall as the rate rises. Every caller still waits for its own
 * item's commit.
 *
 * A group whose write fails with an error `retryAlone` accepts (a duplicate key of one item, which
 * would fail the whole multi-row statement) is written again item by item, so that the error reaches
 * only the item it belongs to. Any other error fails the whole group: its items share the store
 * that failed.
 */
export interface GroupCommitOptions<T> {
  /** Writes the items in one commit. */
  readonly write: (items: readonly T[]) => Promise<void>;
  /** Items per write at most. */
  readonly maxItems: number;
  /** Writes running at once at most (a pool of connections can carry more than one). */
  readonly concurrency?: number;
  /** True when a group that failed so should be written again one item at a time. */
  readonly retryAlone?: (error: unknown) => boolean;
}

interface Waiting<T> {
  readonly item: T;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class GroupCommit<T> {
  private readonly waiting: Waiting<T>[] = [];
  private running = 0;
  private readonly concurrency: number;
  /** Counters since start: writes made and items they carried. */
  readonly counts = { writes: 0, items: 0 };

  constructor(private readonly options: GroupCommitOptions<T>) {
    this.concurrency = Math.max(1, options.concurrency ?? 1);
  }

  /** Resolves once the item is committed (alone or in a group). */
  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.running < this.concurrency) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running++;
    try {
      while (this.waiting.length) {
        const group = this.waiting.splice(0, this.options.maxItems);
        await this.commit(group);
      }
    } finally {
      this.running--;
    }
  }

  private async commit(group: readonly Waiting<T>[]): Promise<void> {
    try {
      await this.write(group.map((w) => w.item));
      for (const w of group) w.resolve();
    } catch (error) {
      if (group.length > 1 && this.options.retryAlone?.(error)) {
        for (const w of group) await this.commit([w]);
        return;
      }
      for (const w of group) w.reject(error);
    }
  }

  private write(items: readonly T[]): Promise<void> {
    this.counts.writes++;
    this.counts.items += items.length;
    return this.options.write(items);
  }
}
