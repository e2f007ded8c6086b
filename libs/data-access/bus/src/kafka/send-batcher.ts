import { GroupCommit } from '@shortlink/core';

export interface SendBatcherOptions<M> {
  /** One producer send of many messages; resolves once the broker acknowledged all of them. */
  readonly send: (messages: M[]) => Promise<void>;
  /** Callers per send at most (a caller's messages are never split across sends; default 500). */
  readonly maxCallers?: number;
  /** Sends in flight at once at most. */
  readonly concurrency?: number;
}

/**
 * Coalesces the sends of concurrent callers into one producer request (docs/design.md, "Group
 * commit"): a send that arrives while `concurrency` sends are in flight waits and goes out with the
 * others that waited, in arrival order, as one request. Each caller resolves once its own messages'
 * request is acknowledged, and a request that fails rejects each of its callers (none is sent again
 * here: the caller's retry decides). Under load the requests, their syscalls and their waits for acks
 * from every in-sync replica are shared; a lone send goes at once, without a timer.
 */
export class SendBatcher<M> {
  private readonly commits: GroupCommit<readonly M[]>;

  constructor(options: SendBatcherOptions<M>) {
    this.commits = new GroupCommit<readonly M[]>({
      write: (groups) => options.send(groups.flat()),
      maxItems: options.maxCallers ?? 500,
      concurrency: options.concurrency ?? 2,
    });
  }

  /** Producer sends made, and the callers they carried. */
  get counts(): { readonly writes: number; readonly items: number } {
    return this.commits.counts;
  }

  send(messages: readonly M[]): Promise<void> {
    return messages.length ? this.commits.submit(messages) : Promise.resolve();
  }
}
