import { LinkCacheWriter, LinkChangeFeed, LinkRepository } from '../ports';
import { eventTarget, LinkChangeEvent } from './link-events';
import { LinkEventConsumer } from './outbox-relay';

/**
 * The caches as a consumer of link events (docs/design.md, "Edits reach every instance"): a new
 * link's "no such link" entry goes and the Bloom filter learns it; an edit writes the link as its
 * shard holds it now into the shared cache (never over a newer version) and a delete its tombstone;
 * then the change is told on the channel, so that every redirect instance drops the link from L1.
 *
 * A Redis master may acknowledge a write and lose it (it was paused or cut off, its replica took
 * over, and it rejoined as a replica of the new master): `reassert` reads an edit back (a delete's
 * tombstone and a create's marks are simply written again) and delivers again what did not hold.
 */
export class CacheEventConsumer implements LinkEventConsumer {
  readonly name = 'caches';

  constructor(
    private readonly cache: LinkCacheWriter,
    private readonly changes: LinkChangeFeed,
    private readonly links: LinkRepository,
    /** Links written at once. */
    private readonly concurrency = 16,
  ) {}

  async deliver(events: readonly LinkChangeEvent[]): Promise<readonly LinkChangeEvent[]> {
    const failed: LinkChangeEvent[] = [];
    const created = events.filter((e) => e.kind === 'link.created');
    if (created.length) await this.cache.created(created.map(eventTarget)).catch(() => failed.push(...created));
    await this.perLink(
      events.filter((e) => e.kind !== 'link.created'),
      async (latest) => void (await this.write(latest, true)),
      failed,
    );
    return failed;
  }

  async reassert(events: readonly LinkChangeEvent[]): Promise<{ again: readonly LinkChangeEvent[]; failed: readonly LinkChangeEvent[] }> {
    const failed: LinkChangeEvent[] = [];
    const again: LinkChangeEvent[] = [];
    // Dropping a "no such link" entry and setting bits again changes nothing when the first time held.
    const created = events.filter((e) => e.kind === 'link.created');
    if (created.length) await this.cache.created(created.map(eventTarget)).catch(() => failed.push(...created));
    const held = new Map<LinkChangeEvent, boolean>();
    await this.perLink(
      events.filter((e) => e.kind !== 'link.created'),
      async (latest, all) => {
        const holds = latest.kind === 'link.edited' ? await this.cache.holds(eventTarget(latest), latest.version) : false;
        const wrote = holds ? false : await this.write(latest, false);
        for (const e of all) held.set(e, !wrote);
      },
      failed,
    );
    for (const [e, ok] of held) if (!ok) again.push(e);
    return { again, failed };
  }

  /**
   * Writes what the link's newest event left: the tombstone of a delete, or the link as its shard
   * holds it now. True when the shared cache did not hold it yet. `announce`: tell the channel even
   * then (a first delivery: the redirect instances may hold the link in L1 whatever Redis holds).
   */
  private async write(event: LinkChangeEvent, announce: boolean): Promise<boolean> {
    const id = eventTarget(event);
    let version = event.version;
    let wrote: boolean;
    if (event.kind === 'link.deleted') wrote = await this.cache.deleted(id, event.version);
    else {
      const link = await this.links.findByCode(id);
      // Gone, or the code is another link's now: that link's own events say what the caches need.
      if (!link || link.id !== event.linkId) return false;
      version = link.version;
      wrote = await this.cache.updated(link);
    }
    if (wrote || announce) await this.changes.publish({ domain: id.domain, code: id.code, version });
    return wrote;
  }

  /**
   * Runs `act` once per link (by id: a code deleted and created again is two links) with its newest
   * event (a delete outranks an edit of the same version),
   * `concurrency` links at a time; every event of a link whose `act` threw goes to `failed`.
   */
  private async perLink(
    events: readonly LinkChangeEvent[],
    act: (latest: LinkChangeEvent, all: readonly LinkChangeEvent[]) => Promise<void>,
    failed: LinkChangeEvent[],
  ): Promise<void> {
    const byLink = new Map<string, LinkChangeEvent[]>();
    for (const e of events) {
      const key = `${e.linkId}\u0000${e.domain}\u0000${e.code}`;
      const list = byLink.get(key);
      if (list) list.push(e);
      else byLink.set(key, [e]);
    }
    const groups = [...byLink.values()];
    let next = 0;
    const worker = async () => {
      while (next < groups.length) {
        const all = groups[next++];
        const latest = all.reduce((a, b) => (b.version > a.version || (b.version === a.version && b.kind === 'link.deleted') ? b : a));
        await act(latest, all).catch(() => failed.push(...all));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, groups.length) }, worker));
  }
}
