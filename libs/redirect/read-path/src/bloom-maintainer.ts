import { randomUUID } from 'crypto';
import { Link, LinkRepository } from '@shortlink/links-domain';
import { CacheKeys } from './cache-keys';
import { BitmapBits, CacheStore } from './ports';
import { bloomItem, BloomFilter, BloomGeneration, BloomLayout, BloomLayoutUnknown, generationRate, planGeneration } from './bloom-filter';

/** A generation is grown out of when its estimated links reach this share of its capacity. */
export const GROW_AT = 0.9;
/** A rebuild sizes its generation for this many times the links it expects (room before the next generation). */
export const REBUILD_HEADROOM = 1.5;
/**
 * The layout lock lives this long unless its holder renews it: a holder renews it every third of
 * that while it works, so an instance stopped mid-change (a crash, a deploy) holds the next
 * change up for at most this long, not for the length of a rebuild.
 */
export const BLOOM_LOCK_TTL_MS = 15_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type RebuildOutcome = 'built' | 'busy';

export interface BloomMaintainerOptions {
  /** How long the layout lock lives unless renewed (BLOOM_LOCK_TTL_MS). */
  readonly lockTtlMs?: number;
  /**
   * The store lives in this process (the embedded profile's in-process cache, empty at every start,
   * shared by every app of the process): no instance can hold a layout the store does not have, so
   * a first build needs no grace before its scan (docs/design.md, "Redirect read path").
   */
  readonly storeInProcess?: boolean;
}

/** What a rebuild made (the CLI prints it). */
export interface RebuildReport {
  readonly outcome: RebuildOutcome;
  readonly links: number;
  readonly layout: BloomLayout | null;
}

/**
 * Keeps the Bloom filter complete and sized (docs/design.md, "Redirect read path"): every create
 * adds its link to the open generations (retried in the background while the cache is unreachable
 * or the layout stale, so a "no" never hides a real link for long); when the newest generation is
 * nearly full a larger one is added; a rebuild scans every shard into a new generation sized from
 * the links it expects and replaces the others. Every layout change takes one lock, so that one
 * instance changes it while the others keep answering from the layout they read.
 *
 * The steps that need every instance to know a layout wait the filter's `graceMs` first: an instance
 * that has not read the layout for `staleAfterMs` (less than that) neither answers "no" nor writes.
 * - Growth: [.., G open] → [.., G open, H open] → (grace) → [.., G sealed, H open]. Until every
 *   instance checks H, creates still go into G as well.
 * - Rebuild: [old..] → [old.., N building] → (grace: every create now writes N too) → scan the shards
 *   into N → [old.., N ready] → (grace) → [N] → (grace) → the old bitmaps deleted.
 */
export class BloomMaintainer {
  /** Items whose bits are still to be written, with when they were first tried. */
  private pending: Array<{ item: string; since: number }> = [];
  private retryTimer: NodeJS.Timeout | null = null;
  private upkeep: NodeJS.Timeout | null = null;
  private busyRetry: NodeJS.Timeout | null = null;
  /** The token of the layout lock while this instance holds it (released by `close` too). */
  private heldLock: string | null = null;

  private readonly lockTtlMs: number;
  private readonly storeInProcess: boolean;

  constructor(
    readonly filter: BloomFilter,
    private readonly store: CacheStore,
    private readonly links: LinkRepository,
    options: BloomMaintainerOptions = {},
  ) {
    this.lockTtlMs = options.lockTtlMs ?? BLOOM_LOCK_TTL_MS;
    this.storeInProcess = options.storeInProcess ?? false;
  }

  /**
   * Called before a create writes its bits. On an in-process store the layout is read again first:
   * a first build there skips the grace (see `rebuild`), so a layout this writer read before the
   * build started would miss the generation being filled, and the new link's bits with it. Reading
   * after the shard insert closes that: either the scan meets the link or this read meets the
   * generation. A shared store keeps the grace instead, and no read per create.
   */
  async beforeWrite(): Promise<void> {
    if (this.storeInProcess) await this.filter.refresh().catch(() => undefined);
  }

  async added(link: Pick<Link, 'domain' | 'code'>): Promise<void> {
    await this.beforeWrite();
    const item = bloomItem(link.domain, link.code);
    try {
      await this.filter.add(item);
    } catch {
      this.pending.push({ item, since: Date.now() });
      this.scheduleRetry();
    }
  }

  /** The Bloom bits of links about to be written by the caller (batch creation, with its invalidations); none while the layout is stale (retried). */
  bitsOf(links: ReadonlyArray<Pick<Link, 'domain' | 'code'>>): BitmapBits[] {
    try {
      return this.filter.bitsOf(links.map((link) => bloomItem(link.domain, link.code)));
    } catch {
      this.retryLater(links);
      return [];
    }
  }

  /** Those bits could not be written: added again in the background, as after a failed `added`. */
  retryLater(links: ReadonlyArray<Pick<Link, 'domain' | 'code'>>): void {
    const since = Date.now();
    for (const link of links) this.pending.push({ item: bloomItem(link.domain, link.code), since });
    this.scheduleRetry();
  }

  /**
   * Reads the layout every `refreshMs` (what a writer needs: the generation app), and grows the filter
   * when its newest generation is nearly full, as the redirect's check does: a large import while no
   * redirect runs would otherwise fill one generation far past its capacity (73 % false positives at
   * 10M links, docs/benchmarks.md "Scale to 10 000 000 links"). One growth at a time per instance; the
   * layout lock keeps instances from growing it twice. `report` hears of each growth and failure.
   */
  follow(report: (outcome: 'grown' | Error) => void = () => undefined): Promise<void> {
    let growing = false;
    return this.filter.follow(async () => {
      if (growing) return;
      growing = true;
      try {
        if ((await this.growIfFull()) === 'grown') report('grown');
      } catch (error) {
        report(error as Error);
      } finally {
        growing = false;
      }
    });
  }

  /** Rebuilds from the shards unless the filter is built (or another instance is changing it). */
  async ensureBuilt(): Promise<'already-built' | RebuildOutcome> {
    if (this.filter.view() === undefined) await this.filter.refresh();
    if (await this.filter.isBuilt()) return 'already-built';
    return (await this.rebuild()).outcome;
  }

  /**
   * Follows the layout, adds a generation when the newest is nearly full (checked on every read of
   * the layout), and checks at once, then every `everyMs`, that the filter is built, rebuilding it
   * when it is not: a partition evicted or lost in a failover answers "unknown" until then. `close` stops it.
   */
  keepBuilt(everyMs: number, report: (outcome: 'rebuilt' | 'grown' | Error) => void): void {
    // Busy: another instance is changing the layout, or one stopped mid-change left its lock (at
    // most one TTL). Checked again soon rather than at the next round, so that an unbuilt filter
    // (every miss a database read) does not last a whole round after the lock is free.
    const ensure = (): Promise<unknown> =>
      this.ensureBuilt().then(
        (r) => {
          if (r === 'built') report('rebuilt');
          if (r === 'busy' && this.upkeep && !this.busyRetry) {
            this.busyRetry = setTimeout(
              () => {
                this.busyRetry = null;
                void ensure();
              },
              Math.min(everyMs, Math.ceil(this.lockTtlMs / 3)),
            );
            this.busyRetry.unref();
          }
        },
        (error) => report(error as Error),
      );
    this.upkeep = setInterval(ensure, everyMs);
    this.upkeep.unref();
    void this.follow(report).then(ensure);
  }

  /** Adds a generation when the newest one holds GROW_AT of its capacity (estimated from a sample). */
  async growIfFull(): Promise<'grown' | 'not-full' | 'busy'> {
    const newest = this.newest(this.filter.view());
    if (!newest) return 'not-full';
    const links = await this.filter.estimate(newest);
    if (links === null || links < GROW_AT * newest.capacity) return 'not-full';
    return this.grow();
  }

  /** Adds a generation `growth` times the newest one's size, and seals the others once every instance checks it. */
  async grow(): Promise<'grown' | 'not-full' | 'busy'> {
    return this.locked<'grown' | 'not-full'>(async (renew) => {
      const layout = await this.filter.refresh();
      const newest = this.newest(layout);
      if (!layout || !newest) return 'not-full';
      const links = await this.filter.estimate(newest);
      if (links !== null && links < GROW_AT * newest.capacity) return 'not-full'; // grown by another instance meanwhile
      const next = this.plan(layout, Math.ceil(newest.capacity * this.filter.growth), layout.generations.length, 'ready');
      await this.filter.create(next);
      const announced = await this.publish([...layout.generations, next]);
      await sleep(this.filter.graceMs);
      await renew();
      await this.publish(announced.generations.map((g) => (g.id === next.id ? g : { ...g, open: false })));
      return 'grown';
    });
  }

  /**
   * Rebuilds the filter from every shard into a new generation sized for REBUILD_HEADROOM times the
   * links expected (`expected`, or estimated from the generations in use, or counted in the shards
   * when there is none; at least the configured capacity), growing by further generations if the
   * scan finds more; then the old ones are dropped.
   */
  async rebuild(pageSize = 5000, expected?: number): Promise<RebuildReport> {
    let links = 0;
    const outcome = await this.locked(async (renew) => {
      const before = await this.filter.refresh();
      const old = before?.generations ?? [];
      // No generation to estimate from (first build, everything evicted): the shards are counted first.
      const guess = expected ?? ((await this.estimateLinks(old)) || (await this.count(pageSize, renew)));
      const building: BloomGeneration[] = [this.plan(before, Math.max(this.filter.options.capacity, Math.ceil(guess * REBUILD_HEADROOM)), 0, 'building')];
      await this.filter.create(building[0]);
      await this.publish([...old, ...building]);
      // From here on every instance that writes knows N; a link created before is in the shards the scan reads.
      // A first build on an in-process store has nobody to wait for: every app of the process read no layout.
      if (old.length > 0 || !this.storeInProcess) await sleep(this.filter.graceMs);
      for await (const page of this.links.identifierPages(pageSize)) {
        let target = building[building.length - 1];
        if (links >= target.capacity) {
          // More links than expected: a larger generation, open at once (creates keep writing the full one too, until the end).
          target = this.plan(before, Math.ceil(target.capacity * this.filter.growth), building.length, 'building', building.length);
          await this.filter.create(target);
          building.push(target);
          await this.publish([...old, ...building]);
        }
        await this.filter.write(
          this.filter.bitsIn(
            [target],
            page.map((p) => bloomItem(p.domain, p.code)),
          ),
        );
        links += page.length;
        await renew();
      }
      for (const g of building) if (!(await this.filter.intact(g))) throw new Error(`Bloom generation ${g.id} lost a partition during the rebuild (evicted?)`);
      const ready = building.map((g) => ({ ...g, state: 'ready' as const }));
      await this.publish([...old, ...ready]);
      if (old.length) {
        await sleep(this.filter.graceMs);
        await renew();
      }
      await this.publish(ready.map((g, i) => ({ ...g, open: i === ready.length - 1 })));
      if (old.length) {
        // Instances that still read the previous layout check the old bitmaps until they read this one.
        await sleep(this.filter.graceMs);
        await this.store.del(old.flatMap((g) => this.filter.partitionKeys(g)));
      }
      // The single-generation filter the platform had before generations.
      if (!this.filter.options.keySpace)
        await this.store.del(Array.from({ length: Math.max(16, this.filter.options.partitions) }, (_, p) => CacheKeys.legacyBloomPartition(p)));
      return 'built' as const;
    });
    return { outcome: outcome === 'busy' ? 'busy' : 'built', links, layout: this.filter.view() ?? null };
  }

  /** Links in every shard, read page by page (identifiers only: no hashing, nothing written). */
  private async count(pageSize: number, renew: () => Promise<void>): Promise<number> {
    let n = 0;
    for await (const page of this.links.identifierPages(pageSize)) {
      n += page.length;
      await renew();
    }
    return n;
  }

  /** Links in the ready generations (each estimated from a sample; 0 for one that lost the sampled partition). */
  private async estimateLinks(generations: readonly BloomGeneration[]): Promise<number> {
    let n = 0;
    for (const g of generations) if (g.state === 'ready') n += (await this.filter.estimate(g).catch(() => null)) ?? 0;
    return n;
  }

  /** The newest generation when it is ready and open (during a rebuild, none). */
  private newest(layout: BloomLayout | null | undefined): BloomGeneration | undefined {
    const last = layout?.generations[layout.generations.length - 1];
    return last && last.state === 'ready' && last.open ? last : undefined;
  }

  private plan(layout: BloomLayout | null, capacity: number, position: number, state: BloomGeneration['state'], suffix = 0): BloomGeneration {
    const o = this.filter.options;
    const id = `${Math.max((layout?.version ?? 0) + 1, Date.now()).toString(36)}-${suffix}`;
    return planGeneration(id, capacity, generationRate(o.falsePositiveRate, position), o.partitions, state);
  }

  private async publish(generations: readonly BloomGeneration[]): Promise<BloomLayout> {
    const layout = await this.filter.publish(generations);
    if (!layout) throw new Error('the Bloom filter layout was changed by another instance');
    return layout;
  }

  /**
   * Runs `change` under the layout lock; 'busy' when another instance holds it. The lock is renewed
   * in the background while `change` runs (through its waits for the grace, too); `renew` is where
   * `change` stops if the lock was lost meanwhile (taken over after a renewal failed for a whole TTL).
   */
  private async locked<T>(change: (renew: () => Promise<void>) => Promise<T>): Promise<T | 'busy'> {
    const lockKey = this.filter.lockKey;
    const token = randomUUID();
    if (!(await this.store.setIfAbsent(lockKey, token, this.lockTtlMs))) return 'busy';
    this.heldLock = token;
    let lost: Error | null = null;
    const heartbeat = setInterval(
      () => {
        this.store
          .get(lockKey)
          .then((holder) => {
            if (holder !== token) lost = new Error('the Bloom filter layout lock was lost');
            else return this.store.set(lockKey, token, this.lockTtlMs);
          })
          // The store unreachable for a beat: the next one retries, the TTL covers two misses.
          .catch(() => undefined);
      },
      Math.max(10, Math.floor(this.lockTtlMs / 3)),
    );
    heartbeat.unref();
    const renew = async () => {
      if (lost) throw lost;
      if (this.heldLock !== token) throw new Error('the Bloom filter layout change was stopped (instance closing)');
    };
    try {
      return await change(renew);
    } finally {
      clearInterval(heartbeat);
      if (this.heldLock === token) this.heldLock = null;
      await this.store.deleteIfEquals(lockKey, token).catch(() => undefined);
    }
  }

  /**
   * Writes the pending bits every second until they go through. While the store has no layout at
   * all, an item is kept for two graces, then dropped: by then any instance that knew a layout has
   * written it back, so none did, and a build still to come scans the shards, which hold the link.
   */
  private scheduleRetry(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(async () => {
      this.retryTimer = null;
      let entries = this.pending.splice(0);
      try {
        await this.filter.addMany(entries.map((e) => e.item));
      } catch (error) {
        if (error instanceof BloomLayoutUnknown && error.absent) {
          const keepFrom = Date.now() - 2 * this.filter.graceMs;
          entries = entries.filter((e) => e.since >= keepFrom);
        }
        this.pending = entries.concat(this.pending);
        if (this.pending.length) this.scheduleRetry();
      }
    }, 1000);
    this.retryTimer.unref();
  }

  /** Items whose bits wait for the store or the layout (tests, metrics). */
  get pendingItems(): number {
    return this.pending.length;
  }

  async close(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.upkeep) clearInterval(this.upkeep);
    if (this.busyRetry) clearTimeout(this.busyRetry);
    this.retryTimer = this.upkeep = this.busyRetry = null;
    this.filter.stop();
    // Stopped mid-change (a deploy): the lock is given up now, so the next instance need not wait out
    // its TTL; the half-made layout is finished by the next rebuild (a building generation is not built).
    if (this.heldLock) await this.store.deleteIfEquals(this.filter.lockKey, this.heldLock).catch(() => undefined);
    this.heldLock = null;
  }
}
