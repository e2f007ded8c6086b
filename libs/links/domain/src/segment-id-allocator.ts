import { IdBlock, SequenceStore } from './ports';

/**
 * Hands out ids from blocks reserved in the shared sequence table (one round trip per block).
 * Concurrent callers in one process share a single in-flight refill. Ids left in a block when
 * the process stops are skipped, never reused.
 */
export class SegmentIdAllocator {
  private current: IdBlock | null = null;
  private next = 0n;
  private refill: Promise<void> | null = null;

  constructor(
    private readonly store: SequenceStore,
    private readonly sequence: string,
    private readonly blockSize = 1000,
  ) {}

  async nextId(): Promise<bigint> {
    for (;;) {
      if (this.current && this.next < this.current.end) return this.next++;
      this.refill ??= this.store
        .allocateBlock(this.sequence, this.blockSize)
        .then((block) => {
          this.current = block;
          this.next = block.start;
        })
        .finally(() => {
          this.refill = null;
        });
      await this.refill;
    }
  }

  /** Reserves n ids at once for batch creation (may span several blocks). */
  async nextIds(n: number): Promise<bigint[]> {
    const ids: bigint[] = [];
    while (ids.length < n) {
      if (this.current && this.next < this.current.end) {
        const take = Math.min(n - ids.length, Number(this.current.end - this.next));
        for (let i = 0; i < take; i++) ids.push(this.next++);
      } else {
        ids.push(await this.nextId());
      }
    }
    return ids;
  }
}
