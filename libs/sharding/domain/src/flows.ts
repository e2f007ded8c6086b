import { ShardRouter } from '@shortlink/shard-router';
import { StoredRow } from './ports';

/** "s1->s4" */
export const flowKey = (from: string, to: string): string => `${from}->${to}`;

/**
 * An order-independent digest of a set of rows: the XOR of their 64-bit checksums, with the count
 * beside it (rows are unique by id on a shard, so equal sets give equal pairs).
 */
export class RowSetDigest {
  rows = 0;
  private xor = 0n;

  add(checksum: string): void {
    this.rows++;
    this.xor ^= BigInt(`0x${checksum.slice(0, 16) || '0'}`);
  }

  get checksum(): string {
    return this.xor.toString(16).padStart(16, '0');
  }
}

/** Where a row stands in a move from `before` to `after`, seen from the shard that holds it. */
export function movement(before: ShardRouter, after: ShardRouter, holder: string, row: Pick<StoredRow, 'code'>): 'stays' | 'leaves' | 'arrives' | 'stray' {
  const from = before.shardFor(row.code);
  const to = after.shardFor(row.code);
  if (from === holder) return to === holder ? 'stays' : 'leaves';
  if (to === holder) return 'arrives';
  return 'stray';
}

/** Population standard deviation (of shard sizes). */
export function stddev(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
}

/** Keeps a loop at or under `perSecond` items: call `take(n)` after each batch of n. */
export class Pacer {
  private readonly startedAt: number;
  private done = 0;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {
    this.startedAt = now();
  }

  async take(n: number): Promise<void> {
    this.done += n;
    if (this.perSecond <= 0) return;
    const due = this.startedAt + (this.done / this.perSecond) * 1000;
    const wait = due - this.now();
    if (wait > 0) await this.sleep(wait);
  }
}
