import { ShortUrlIdentifier } from '@shortlink/links-domain';
import { ClickCounts } from '../click-quota';
import { BitmapBits, CacheStore } from '../ports';

/** The shared cache in a Map, for the read path's unit tests (TTLs recorded, not applied). */
export class InMemoryCache implements CacheStore {
  readonly values = new Map<string, string>();
  /** The TTL of each key's last write (undefined: none). */
  readonly ttls = new Map<string, number | undefined>();
  down = false;
  private guard() {
    if (this.down) throw new Error('ECONNREFUSED');
  }
  async get(k: string) {
    this.guard();
    return this.values.get(k) ?? null;
  }
  async set(k: string, v: string, ttlMs?: number) {
    this.guard();
    this.values.set(k, v);
    this.ttls.set(k, ttlMs);
  }
  async del(keys: readonly string[]) {
    this.guard();
    keys.forEach((k) => this.values.delete(k));
  }
  async pttl() {
    return -1;
  }
  async setIfAbsent(k: string, v: string, ttlMs: number) {
    this.guard();
    if (this.values.has(k)) return false;
    this.values.set(k, v);
    this.ttls.set(k, ttlMs);
    return true;
  }
  async deleteIfEquals(k: string, v: string) {
    this.guard();
    return this.values.get(k) === v && this.values.delete(k);
  }
  async incrBy(k: string, d: number) {
    this.guard();
    const n = Number(this.values.get(k) ?? 0) + d;
    this.values.set(k, String(n));
    return n;
  }
  async setIfNewer(k: string, v: string, version: number, ttlMs?: number) {
    this.guard();
    const current = this.values.get(k);
    if (current) {
      try {
        const stored = (JSON.parse(current) as { version?: number }).version;
        if (typeof stored === 'number' && stored >= version) return false;
      } catch {
        // replaced
      }
    }
    this.values.set(k, v);
    this.ttls.set(k, ttlMs);
    return true;
  }
  async incrementBelow(k: string, limit: number, initial: number) {
    this.guard();
    const n = this.values.has(k) ? Number(this.values.get(k)) : initial;
    if (n >= limit) return null;
    this.values.set(k, String(n + 1));
    return n + 1;
  }
  async setBits() {}
  async getBits(_k: string, offsets: readonly number[]) {
    return offsets.map(() => 0);
  }
  async countBits() {
    return 0;
  }
  /** Bitmaps are not kept here (as `setBits`): only the deletes of null sentinels. */
  async dropNullsAndSetBits(keys: readonly string[], _bitmaps: readonly BitmapBits[]) {
    for (const k of keys) await this.deleteIfEquals(k, '');
  }
  async ping() {}
  async close() {}
}

/** The click counts the shards keep per link row (ClickCounts), for the read path's unit tests. */
export class InMemoryClickCounts implements ClickCounts {
  /** By link id, for the links that exist. */
  readonly counts = new Map<string, number>();
  /** Every call fails (the shard is down). */
  down = false;

  async addClicks(_id: ShortUrlIdentifier, linkId: string, delta: number): Promise<number | null> {
    if (this.down) throw new Error('shard down');
    const count = this.counts.get(linkId);
    if (count === undefined) return null;
    this.counts.set(linkId, count + delta);
    return count + delta;
  }

  async clickCount(_id: ShortUrlIdentifier, linkId: string): Promise<number | null> {
    if (this.down) throw new Error('shard down');
    return this.counts.get(linkId) ?? null;
  }
}
