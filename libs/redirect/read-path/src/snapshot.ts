import { CachedLink } from '@shortlink/links-domain';
import { SnapshotStore } from './ports';
import { HotLinkSnapshot } from './redirect-pipeline';

/** In-memory view of the last snapshot; refreshed from the hot set, persisted, loaded at start. */
export class HotLinkSnapshotKeeper implements HotLinkSnapshot {
  private entries = new Map<string, CachedLink>();

  constructor(private readonly store: SnapshotStore) {}

  get(key: string): CachedLink | undefined {
    return this.entries.get(key);
  }

  get size(): number {
    return this.entries.size;
  }

  async load(): Promise<number> {
    this.entries = new Map((await this.store.load()).map((e) => [e.key, e.link]));
    return this.entries.size;
  }

  /** Merges the current hot links over the previous snapshot (keeps at most `limit`, hottest first). */
  async refresh(hot: ReadonlyArray<{ key: string; link: CachedLink | null }>, limit: number): Promise<void> {
    const next = new Map<string, CachedLink>();
    for (const { key, link } of hot) if (link && next.size < limit) next.set(key, link);
    for (const [key, link] of this.entries) if (next.size < limit && !next.has(key)) next.set(key, link);
    this.entries = next;
    await this.store.save([...next].map(([key, link]) => ({ key, link })));
  }
}
