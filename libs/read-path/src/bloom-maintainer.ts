import { randomUUID } from 'crypto';
import { Link, LinkRepository } from '@shortlink/links-domain';
import { CacheKeys } from './cache-keys';
import { BitmapBits, CacheStore } from './ports';
import { bloomItem, BloomFilter } from './bloom-filter';

/**
 * Keeps the Bloom filter complete: every create adds its link (retried in the background while
 * Redis is unreachable, so a "no" never hides a real link for long), and a rebuild scans every
 * shard. Rebuilds take a lock so that one instance builds while the others keep answering
 * "unknown" (which falls through to the shard, never a false 404).
 */
export class BloomMaintainer {
  private pending: string[] = [];
  private retryTimer: NodeJS.Timeout | null = null;
  private upkeep: NodeJS.Timeout | null = null;

  constructor(
    readonly filter: BloomFilter,
    private readonly store: CacheStore,
    private readonly links: LinkRepository,
  ) {}

  async added(link: Pick<Link, 'domain' | 'code'>): Promise<void> {
    const item = bloomItem(link.domain, link.code);
    try {
      await this.filter.add(item);
    } catch {
      this.pending.push(item);
      this.scheduleRetry();
    }
  }

  /** The Bloom bits of links about to be written by the caller (batch creation, with its invalidations). */
  bitsOf(links: ReadonlyArray<Pick<Link, 'domain' | 'code'>>): BitmapBits[] {
    return this.filter.bitsOf(links.map((link) => bloomItem(link.domain, link.code)));
  }

  /** Those bits could not be written: added again in the background, as after a failed `added`. */
  retryLater(links: ReadonlyArray<Pick<Link, 'domain' | 'code'>>): void {
    for (const link of links) this.pending.push(bloomItem(link.domain, link.code));
    this.scheduleRetry();
  }

  /** Rebuilds from the shards unless the filter is already built (or another instance is building). */
  async ensureBuilt(): Promise<'already-built' | 'built' | 'busy'> {
    if (await this.filter.isBuilt()) return 'already-built';
    return this.rebuild();
  }

  /**
   * Checks at once, then every `everyMs`, that the filter is built, and rebuilds it when it is not:
   * a partition evicted or lost in a failover answers "unknown" until then. `close` stops it.
   */
  keepBuilt(everyMs: number, report: (outcome: 'rebuilt' | Error) => void): void {
    const ensure = () =>
      this.ensureBuilt().then(
        (r) => r === 'built' && report('rebuilt'),
        (error) => report(error as Error),
      );
    void ensure();
    this.upkeep = setInterval(ensure, everyMs);
    this.upkeep.unref();
  }

  async rebuild(pageSize = 5000): Promise<'built' | 'busy'> {
    const lockKey = CacheKeys.bloomRebuildLock;
    const token = randomUUID();
    if (!(await this.store.setIfAbsent(lockKey, token, 10 * 60_000))) return 'busy';
    try {
      await this.filter.clear();
      for await (const page of this.links.identifierPages(pageSize)) await this.filter.addMany(page.map((p) => bloomItem(p.domain, p.code)));
      await this.filter.markBuilt();
      return 'built';
    } finally {
      await this.store.deleteIfEquals(lockKey, token).catch(() => undefined);
    }
  }

  private scheduleRetry(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(async () => {
      this.retryTimer = null;
      const items = this.pending.splice(0);
      try {
        await this.filter.addMany(items);
      } catch {
        this.pending.unshift(...items);
        this.scheduleRetry();
      }
    }, 1000);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.upkeep) clearInterval(this.upkeep);
    this.retryTimer = this.upkeep = null;
  }
}
