import { x64 } from 'murmurhash3js-revisited';
import { murmur32 } from '@shortlink/shard-router';
import { CacheKeys } from './cache-keys';
import { BitmapBits, CacheStore } from './ports';

export interface BloomOptions {
  /** Expected number of links (n). */
  readonly capacity: number;
  /** Target false-positive rate (p), 1 % (docs/design.md, "Where the numbers come from"). */
  readonly falsePositiveRate: number;
  /** Bitmaps the filter is split into; each is one key, so they spread over cluster slots. */
  readonly partitions: number;
}

export type BloomAnswer = 'no' | 'maybe' | 'unknown';

/** m = -n·ln p / (ln 2)², k = (m / n)·ln 2 (docs/design.md, "Redirect read path"). */
export function bloomSize(capacity: number, falsePositiveRate: number): { bits: number; hashes: number } {
  const bits = Math.ceil((-capacity * Math.log(falsePositiveRate)) / Math.LN2 ** 2);
  return { bits, hashes: Math.max(1, Math.round((bits / capacity) * Math.LN2)) };
}

const encoder = new TextEncoder();

/**
 * Bloom filter of existing links kept in bitmaps of the shared cache (Redis Cluster in the server profile).
 * An item's k bits all live in one partition, so a check is one BITFIELD on one key. Bit 0 of
 * every partition is a sentinel set when the partition was built: a partition that was never
 * built or was evicted answers "unknown", never a false "no".
 */
export class BloomFilter {
  readonly bitsPerPartition: number;
  readonly hashes: number;

  constructor(
    private readonly store: CacheStore,
    readonly options: BloomOptions,
  ) {
    const { bits, hashes } = bloomSize(options.capacity, options.falsePositiveRate);
    this.bitsPerPartition = Math.ceil(bits / options.partitions);
    this.hashes = hashes;
  }

  partitionKey(p: number): string {
    return CacheKeys.bloomPartition(p);
  }

  locate(item: string): { key: string; offsets: number[] } {
    const partition = murmur32(item, 0x9747b28c) % this.options.partitions;
    const hex = x64.hash128(encoder.encode(item));
    // Enhanced double hashing (Kirsch-Mitzenmacher) over three 32-bit words of one 128-bit hash.
    const m = this.bitsPerPartition;
    let a = parseInt(hex.slice(0, 8), 16) % m;
    let b = parseInt(hex.slice(8, 16), 16) % m;
    const offsets = new Array<number>(this.hashes);
    for (let i = 0; i < this.hashes; i++) {
      offsets[i] = 1 + a;
      a = (a + b) % m;
      b = (b + i + 1) % m;
    }
    return { key: this.partitionKey(partition), offsets };
  }

  async add(item: string): Promise<void> {
    const { key, offsets } = this.locate(item);
    await this.store.setBits(key, offsets);
  }

  async addMany(items: Iterable<string>): Promise<void> {
    await Promise.all(this.bitsOf(items).map(({ key, offsets }) => this.store.setBits(key, offsets)));
  }

  /** The bits `addMany` would set, by partition: for a caller that writes them with other work. */
  bitsOf(items: Iterable<string>): BitmapBits[] {
    const byKey = new Map<string, number[]>();
    for (const item of items) {
      const { key, offsets } = this.locate(item);
      const list = byKey.get(key);
      if (list) for (const o of offsets) list.push(o);
      else byKey.set(key, offsets);
    }
    return [...byKey].map(([key, offsets]) => ({ key, offsets }));
  }

  async check(item: string): Promise<BloomAnswer> {
    const { key, offsets } = this.locate(item);
    const bits = await this.store.getBits(key, [0, ...offsets]);
    if (bits[0] === 0) return 'unknown';
    return bits.every((b) => b === 1) ? 'maybe' : 'no';
  }

  /** True when every partition carries its sentinel (the filter was built). */
  async isBuilt(): Promise<boolean> {
    const bits = await Promise.all(Array.from({ length: this.options.partitions }, (_, p) => this.store.getBits(this.partitionKey(p), [0])));
    return bits.every((b) => b[0] === 1);
  }

  async markBuilt(): Promise<void> {
    await Promise.all(Array.from({ length: this.options.partitions }, (_, p) => this.store.setBits(this.partitionKey(p), [0])));
  }

  async clear(): Promise<void> {
    await this.store.del(Array.from({ length: this.options.partitions }, (_, p) => this.partitionKey(p)));
  }
}

export const bloomItem = (domain: string, code: string): string => `${domain}/${code}`;
