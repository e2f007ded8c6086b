import { performance } from 'perf_hooks';
import { murmur32, murmur64Halves } from '@shortlink/shard-router';
import { CacheKeys } from './cache-keys';
import { BitmapBits, CacheStore } from './ports';

export interface BloomOptions {
  /** Links the first generation holds (n), and the least a rebuild sizes for. */
  readonly capacity: number;
  /**
   * Target false-positive rate (p) of the whole filter, 1 % (docs/design.md, "Where the numbers
   * come from"): generation i is sized for p / 2^(i+1), so that all of them together stay below p.
   */
  readonly falsePositiveRate: number;
  /** Bitmaps each generation is split into; each is one key, so they spread over cluster slots. */
  readonly partitions: number;
  /** A new generation holds this many times the links of the one before (2). */
  readonly growth?: number;
  /** How often the layout is read from the store (1 000 ms); see `staleAfterMs`. */
  readonly refreshMs?: number;
  /** Tests only: a layout and lock of their own on a shared store (generation ids are unique anyway). */
  readonly keySpace?: string;
}

export type BloomAnswer = 'no' | 'maybe' | 'unknown';

/**
 * One generation of the scalable Bloom filter: its own bitmaps, sized for its capacity and rate.
 * `building`: being filled by a rebuild, read by nobody. `open`: creates write their bits into it.
 */
export interface BloomGeneration {
  readonly id: string;
  readonly capacity: number;
  readonly falsePositiveRate: number;
  readonly partitions: number;
  readonly bitsPerPartition: number;
  readonly hashes: number;
  readonly state: 'building' | 'ready';
  readonly open: boolean;
}

/** What every instance reads from `short:bloom:layout`; a newer version always wins. */
export interface BloomLayout {
  readonly version: number;
  readonly generations: readonly BloomGeneration[];
}

/** m = -n·ln p / (ln 2)², k = (m / n)·ln 2 (docs/design.md, "Redirect read path"). */
export function bloomSize(capacity: number, falsePositiveRate: number): { bits: number; hashes: number } {
  const bits = Math.ceil((-capacity * Math.log(falsePositiveRate)) / Math.LN2 ** 2);
  return { bits, hashes: Math.max(1, Math.round((bits / capacity) * Math.LN2)) };
}

/** The rate of the generation at `position` (0 = the oldest): p/2, p/4, ... (their sum stays below p). */
export const generationRate = (target: number, position: number): number => target / 2 ** (position + 1);

/** A generation for `capacity` links at the rate of its position, its bitmaps not yet made. */
export function planGeneration(id: string, capacity: number, rate: number, partitions: number, state: BloomGeneration['state']): BloomGeneration {
  const { bits, hashes } = bloomSize(capacity, rate);
  return { id, capacity, falsePositiveRate: rate, partitions, bitsPerPartition: Math.ceil(bits / partitions), hashes, state, open: true };
}

/** Bytes a generation's bitmaps take in the store once written to their last bit (the sentinel included). */
export const generationBytes = (g: BloomGeneration): number => g.partitions * Math.ceil((g.bitsPerPartition + 1) / 8);

/**
 * Items in a Bloom filter of m bits and k hashes with X bits set: n ≈ −(m/k)·ln(1 − X/m)
 * (Swamidass and Baldi), used on a sample of one partition to tell when a generation is full.
 */
export function estimateItems(setBits: number, bits: number, hashes: number): number {
  if (setBits >= bits) return Infinity;
  if (setBits <= 0) return 0;
  return (-bits / hashes) * Math.log(1 - setBits / bits);
}

/** Bytes of a partition read to estimate its fill (one BITCOUNT; uniform hashing makes any range a fair sample). */
const SAMPLE_BYTES = 64 * 1024;

/** An item's hash, computed once and placed in every generation. */
interface ItemHash {
  readonly partition: number;
  readonly a: number;
  readonly b: number;
}

/**
 * A create's bits cannot be written now: the layout was not read lately, or there is none (yet:
 * a build may be about to publish one, or another instance is about to write back an evicted one).
 */
export class BloomLayoutUnknown extends Error {
  constructor(readonly absent: boolean) {
    super(absent ? 'the Bloom filter has no layout' : 'the Bloom filter layout could not be read lately');
  }
}

/**
 * Scalable Bloom filter of existing links, kept in bitmaps of the shared cache (Redis Cluster in the
 * server profile; docs/design.md, "Redirect read path"). Its layout (`short:bloom:layout`) lists
 * generations; a check reads one partition of every ready generation (one `BITFIELD_RO` each, issued
 * together) and says "no" only when every one of them says no. An item's k bits of a generation all
 * live in one partition. Bit 0 of every partition is a sentinel set when the partition is created,
 * before any item: a partition that was evicted (and perhaps re-created by later writes) lacks it and
 * answers "unknown", never a false "no".
 *
 * Every instance reads the layout every `refreshMs`. One that could not for `staleAfterMs` answers
 * "unknown" and writes nothing (a create's bits are retried): the layout changes
 * (BloomMaintainer) wait `graceMs`, longer than that, before a step that needs every instance to
 * know the previous one.
 */
export class BloomFilter {
  readonly refreshMs: number;
  /** A layout read longer ago than this is not used. */
  readonly staleAfterMs: number;
  /** How long a layout change waits until every instance that still acts knows it. */
  readonly graceMs: number;
  readonly growth: number;
  readonly layoutKey: string;
  readonly lockKey: string;
  private layout: BloomLayout | null = null;
  private ready: readonly BloomGeneration[] = [];
  private open: readonly BloomGeneration[] = [];
  /** When the last successful read of the layout began; -Infinity: never. */
  private readAt = -Infinity;
  private following: NodeJS.Timeout | null = null;
  private sample = 0;
  /** Called when a layout with a ready generation is adopted (whenReady). */
  private readyWaiters: Array<() => void> = [];

  constructor(
    private readonly store: CacheStore,
    readonly options: BloomOptions,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.refreshMs = options.refreshMs ?? 1000;
    this.staleAfterMs = 3 * this.refreshMs;
    this.graceMs = this.staleAfterMs + this.refreshMs;
    this.growth = options.growth ?? 2;
    this.layoutKey = CacheKeys.bloomLayout(options.keySpace);
    this.lockKey = CacheKeys.bloomRebuildLock(options.keySpace);
  }

  /** The layout in use: undefined while stale (not read for `staleAfterMs`), null when there is none. */
  view(): BloomLayout | null | undefined {
    return this.now() - this.readAt <= this.staleAfterMs ? this.layout : undefined;
  }

  /**
   * Reads the layout. A newer one is adopted; when the store lost it (evicted) or holds an older
   * one, the one known here is written back, never over a newer version, so an eviction of the
   * layout key does not make the instances forget the generations.
   */
  async refresh(): Promise<BloomLayout | null> {
    const started = this.now();
    const raw = await this.store.get(this.layoutKey);
    const seen = raw ? parseLayout(raw) : null;
    if (seen && (!this.layout || seen.version > this.layout.version)) this.adopt(seen);
    else if (this.layout && (!seen || seen.version < this.layout.version)) {
      const restored = await this.store.setIfNewer(this.layoutKey, JSON.stringify(this.layout), this.layout.version);
      if (!restored) {
        // A newer layout arrived meanwhile: taken on the next read, this one is not fresh.
        return this.layout;
      }
    }
    this.readAt = started;
    return this.layout;
  }

  /** Reads the layout now and every `refreshMs` until `stop` (a failed read is tried again on the next tick). */
  async follow(onTick?: () => Promise<unknown>): Promise<void> {
    if (this.following) return;
    const tick = () =>
      this.refresh()
        .then(() => onTick?.())
        .catch(() => undefined);
    this.following = setInterval(tick, this.refreshMs);
    this.following.unref();
    await tick();
  }

  stop(): void {
    if (this.following) clearInterval(this.following);
    this.following = null;
  }

  /** Writes a layout newer than any in the store; false when a newer one is there already. */
  async publish(generations: readonly BloomGeneration[]): Promise<BloomLayout | null> {
    const version = Math.max((this.layout?.version ?? 0) + 1, Date.now());
    const layout: BloomLayout = { version, generations };
    const started = this.now();
    if (!(await this.store.setIfNewer(this.layoutKey, JSON.stringify(layout), version))) return null;
    this.adopt(layout);
    this.readAt = started;
    return layout;
  }

  private adopt(layout: BloomLayout): void {
    this.layout = layout;
    this.ready = layout.generations.filter((g) => g.state === 'ready');
    this.open = layout.generations.filter((g) => g.open);
    if (this.ready.length > 0 && this.readyWaiters.length > 0) for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  /**
   * Resolves true once this instance checks a ready generation (it can answer "no"), false when
   * `timeoutMs` passed first: the redirect waits for it before it listens (docs/design.md, "Redirect read path").
   */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.view() && this.ready.length > 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      this.readyWaiters.push(done);
    });
  }

  private hash(item: string): ItemHash {
    // The two 32-bit words of MurmurHash3 x64-128's first half, and x86_32 with its own seed for the partition.
    const [a, b] = murmur64Halves(item);
    return { partition: murmur32(item, 0x9747b28c), a, b };
  }

  /** The item's bitmap in a generation and its k offsets there, with the sentinel (0) first when asked. */
  private place(g: BloomGeneration, h: ItemHash, withSentinel: boolean): { key: string; offsets: number[] } {
    // Enhanced double hashing (Kirsch-Mitzenmacher) over two 32-bit words of one 128-bit hash.
    const m = g.bitsPerPartition;
    let a = h.a % m;
    let b = h.b % m;
    const first = withSentinel ? 1 : 0;
    const offsets = new Array<number>(g.hashes + first);
    if (withSentinel) offsets[0] = 0;
    for (let i = 0; i < g.hashes; i++) {
      offsets[first + i] = 1 + a;
      a = (a + b) % m;
      b = (b + i + 1) % m;
    }
    return { key: CacheKeys.bloomPartition(g.id, h.partition % g.partitions), offsets };
  }

  /** Where an item lives in a generation (for tests and tools). */
  locate(g: BloomGeneration, item: string): { key: string; offsets: number[] } {
    return this.place(g, this.hash(item), false);
  }

  /**
   * "no" only when every ready generation says no; "unknown" (go to the shard) without a fresh
   * layout, without a ready generation, or when a partition read lacks its sentinel.
   */
  async check(item: string): Promise<BloomAnswer> {
    const generations = this.view() === undefined ? [] : this.ready;
    if (generations.length === 0) return 'unknown';
    const h = this.hash(item);
    const reads = generations.map((g) => {
      const { key, offsets } = this.place(g, h, true);
      return this.store.getBits(key, offsets);
    });
    let unknown = false;
    for (const bits of await Promise.all(reads)) {
      if (bits[0] === 0) unknown = true;
      else if (bits.every((b) => b === 1)) return 'maybe';
    }
    return unknown ? 'unknown' : 'no';
  }

  /**
   * The bits creates set, by bitmap, in every open generation. Throws BloomLayoutUnknown while the
   * layout is stale or absent: the caller retries later (BloomMaintainer).
   */
  bitsOf(items: Iterable<string>): BitmapBits[] {
    const layout = this.view();
    if (!layout) throw new BloomLayoutUnknown(layout === null);
    return this.bitsIn(this.open, items);
  }

  /** The bits of `items` in the given generations, by bitmap. */
  bitsIn(generations: readonly BloomGeneration[], items: Iterable<string>): BitmapBits[] {
    if (generations.length === 0) return [];
    const byKey = new Map<string, number[]>();
    for (const item of items) {
      const h = this.hash(item);
      for (const g of generations) {
        const { key, offsets } = this.place(g, h, false);
        const list = byKey.get(key);
        if (list) for (const o of offsets) list.push(o);
        else byKey.set(key, offsets);
      }
    }
    return [...byKey].map(([key, offsets]) => ({ key, offsets }));
  }

  async write(bits: readonly BitmapBits[]): Promise<void> {
    await Promise.all(bits.map(({ key, offsets }) => this.store.setBits(key, offsets)));
  }

  async add(item: string): Promise<void> {
    await this.write(this.bitsOf([item]));
  }

  async addMany(items: Iterable<string>): Promise<void> {
    await this.write(this.bitsOf(items));
  }

  partitionKeys(g: BloomGeneration): string[] {
    return Array.from({ length: g.partitions }, (_, p) => CacheKeys.bloomPartition(g.id, p));
  }

  /** Creates a generation's bitmaps with their sentinels, before any item and before any instance reads them. */
  async create(g: BloomGeneration): Promise<void> {
    await Promise.all(this.partitionKeys(g).map((key) => this.store.setBits(key, [0])));
  }

  /** True when every partition of the generation still has its sentinel (none was evicted). */
  async intact(g: BloomGeneration): Promise<boolean> {
    const bits = await Promise.all(this.partitionKeys(g).map((key) => this.store.getBits(key, [0])));
    return bits.every((b) => b[0] === 1);
  }

  /**
   * Links in a generation, estimated from one partition (a different one each call): its first
   * 64 KiB counted with one BITCOUNT. A partition that lost its sentinel (evicted) is passed over
   * for the next; null when every one did.
   */
  async estimate(g: BloomGeneration): Promise<number | null> {
    const bytes = Math.min(SAMPLE_BYTES, Math.ceil((g.bitsPerPartition + 1) / 8));
    for (let tried = 0; tried < g.partitions; tried++) {
      const key = CacheKeys.bloomPartition(g.id, this.sample++ % g.partitions);
      const [sentinel] = await this.store.getBits(key, [0]);
      if (sentinel !== 1) continue;
      const set = (await this.store.countBits(key, 0, bytes - 1)) - 1;
      const sampled = Math.min(bytes * 8, g.bitsPerPartition + 1) - 1;
      return estimateItems((set / sampled) * g.bitsPerPartition, g.bitsPerPartition, g.hashes) * g.partitions;
    }
    return null;
  }

  /** Ready generations whose every partition has its sentinel; a stale or missing layout is not built. */
  async isBuilt(): Promise<boolean> {
    const layout = this.view();
    if (!layout || this.ready.length === 0) return false;
    if (layout.generations.some((g) => g.state === 'building')) return false;
    for (const g of this.ready) if (!(await this.intact(g))) return false;
    return true;
  }

  /** The generations in use and what they take in the store (the metrics read it on each scrape). */
  describe(): { generations: number; capacity: number; bytes: number; version: number } {
    const gens = this.layout?.generations ?? [];
    return {
      generations: this.ready.length,
      capacity: this.ready.reduce((n, g) => n + g.capacity, 0),
      bytes: gens.reduce((n, g) => n + generationBytes(g), 0),
      version: this.layout?.version ?? 0,
    };
  }
}

function parseLayout(raw: string): BloomLayout | null {
  try {
    const value = JSON.parse(raw) as BloomLayout;
    return typeof value?.version === 'number' && Array.isArray(value.generations) ? value : null;
  } catch {
    return null;
  }
}

export const bloomItem = (domain: string, code: string): string => `${domain}/${code}`;
