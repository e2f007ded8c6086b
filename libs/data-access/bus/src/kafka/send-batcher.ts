export interface SendBatcherOptions<M> {
  /** One producer send of many messages; resolves once the broker acknowledged all of them. */
  readonly send: (messages: M[]) => Promise<void>;
  /** Callers per send at most (a caller's messages are never split across sends; default 500). */
  readonly maxCallers?: number;
  /** Sends in flight at once at most (default 2). */
  readonly concurrency?: number;
}

interface Caller<M> {
  readonly messages: readonly M[];
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Coalesces the sends of concurrent callers into one producer request (docs/design.md, "Group
 * commit"): the callers of one event-loop turn (the requests read together) go at the end of it
 * (setImmediate: no timer, no added wait beyond the turn), and those that arrive while
 * `concurrency` sends are in flight go together once one is acknowledged, in arrival order. Each
 * caller resolves once its own messages' request is acknowledged, and a request that fails rejects
 * each of its callers (none is sent again here: the caller's retry decides). Under load the
 * requests, their syscalls and their waits for acks from every in-sync replica are shared (the
 * acks of a local broker come back within a turn or two, so waiting for a send in flight alone
 * grouped few: docs/benchmarks.md, "Track endpoints").
 */
export class SendBatcher<M> {
  private readonly waiting: Caller<M>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxCallers: number;
  private readonly concurrency: number;
  /** Producer sends made, and the callers they carried. */
  readonly counts = { writes: 0, items: 0 };

  constructor(private readonly options: SendBatcherOptions<M>) {
    this.maxCallers = Math.max(1, options.maxCallers ?? 500);
    this.concurrency = Math.max(1, options.concurrency ?? 2);
  }

  send(messages: readonly M[]): Promise<void> {
    if (!messages.length) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ messages, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.concurrency || !this.waiting.length) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    while (this.inFlight < this.concurrency && this.waiting.length) {
      const group = this.waiting.splice(0, this.maxCallers);
      this.inFlight++;
      this.counts.writes++;
      this.counts.items += group.length;
      let sent: Promise<void>;
      try {
        sent = this.options.send(group.flatMap((c) => c.messages));
      } catch (error) {
        sent = Promise.reject(error);
      }
      void sent
        .then(
          () => group.forEach((c) => c.resolve()),
          (error: unknown) => group.forEach((c) => c.reject(error)),
        )
        .finally(() => {
          this.inFlight--;
          this.schedule();
        });
    }
  };
}
