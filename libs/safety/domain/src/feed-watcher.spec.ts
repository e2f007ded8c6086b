import { FeedWatcher } from './feed-watcher';
import { indexedLinkOf } from './health';
import { LiveRecheck } from './live-recheck';
import { FeedReader, FeedValidator } from './ports';
import { FeedSet, ReputationService } from './reputation';
import { safetyWorld } from './testing';
import { FeedSpec } from './threats';

/** Feeds by location, with a version as their validator; counts reads. */
class Feeds implements FeedReader {
  readonly texts = new Map<string, { text: string; version: number }>();
  failing = false;
  reads = 0;
  put(location: string, text: string) {
    this.texts.set(location, { text, version: (this.texts.get(location)?.version ?? 0) + 1 });
  }
  async read(location: string, previous: FeedValidator | null) {
    this.reads++;
    if (this.failing) throw new Error('connection refused');
    const feed = this.texts.get(location)!;
    if (previous?.version === String(feed.version)) return 'unchanged' as const;
    return { text: feed.text, validator: { version: String(feed.version) } };
  }
}

const HOSTS: FeedSpec = { format: 'hosts', location: '/feeds/hosts.txt', action: 'flagged' };
const PHISH: FeedSpec = { format: 'openphish', location: 'https://feeds.example/openphish.txt', action: 'banned' };

describe('feeds read on a schedule, and live links judged again when a feed changes (docs/design.md, "Trust and safety")', () => {
  const setup = (specs: FeedSpec[] = [HOSTS, PHISH]) => {
    const world = safetyWorld();
    const reader = new Feeds();
    const reputation = new ReputationService(new FeedSet(), null, { cacheHosts: 10, missTtlMs: 1000, remotePerSecond: 1, remoteTimeoutMs: 100 }, world.clock);
    const recheck = new LiveRecheck(world.store, world.links, reputation.feeds, world.store, world.notices, world.clock);
    const rechecked: number[] = [];
    const watcher = (owner: string) =>
      new FeedWatcher(specs, reader, reputation, world.store, recheck, { owner, leaseMs: 60_000, onRechecked: (_, r) => rechecked.push(r.links) }, world.clock);
    const live = async (url: string) => {
      const link = await world.service.create({ tenantId: 't1', url });
      await world.store.index([indexedLinkOf(link)], new Date(world.now.t));
      return link;
    };
    return { ...world, reader, reputation, watcher, live, rechecked };
  };

  it('flags (or bans) a live link whose host a feed starts to list, once, with the feed as its source', async () => {
    const w = setup();
    const onAds = await w.live('https://cdn.ads.example/banner');
    const phished = await w.live('https://login.example/steal?x=1');
    const clean = await w.live('https://shop.example/');
    w.reader.put(HOSTS.location, 'other.example\n');
    w.reader.put(PHISH.location, 'https://unrelated.example/\n');
    const a = w.watcher('a');
    await a.refresh();
    expect(w.notices.escalations).toEqual([]);
    w.reader.put(HOSTS.location, 'other.example\nads.example\n');
    w.reader.put(PHISH.location, 'https://unrelated.example/\nhttps://login.example/steal?x=1\n');
    await a.refresh();
    expect(await w.repo.findByCode(onAds)).toMatchObject({ moderation: 'flagged', moderationSource: 'feed:hosts', version: 2 });
    expect(await w.repo.findByCode(phished)).toMatchObject({ moderation: 'banned', moderationSource: 'feed:openphish' });
    expect((await w.repo.findByCode(clean))?.moderation).toBe('clear');
    expect(w.notices.escalations.map((e) => e.code).sort()).toEqual([onAds.code, phished.code].sort());
    expect((await w.store.queueItem(onAds.id))?.hit).toMatchObject({ source: 'feed:hosts', state: 'flagged' });
    // Only the hosts the second load added were looked up: one link each.
    expect(w.rechecked).toEqual([0, 0, 1, 1]);
    // The redirect learns it like an edit.
    expect(w.feed.published).toEqual(expect.arrayContaining([{ domain: 'sho.rt', code: onAds.code, version: 2 }]));
  });

  it('checks live links once per feed content across instances: another instance with the same digest does nothing, a held lease waits', async () => {
    const w = setup([HOSTS]);
    await w.live('https://ads.example/');
    w.reader.put(HOSTS.location, 'ads.example\n');
    // Instance b holds the feed's lease: a cannot recheck now, and tries again at its next refresh.
    await w.store.claimLease(`feed-recheck:${HOSTS.format}:${HOSTS.location}`, 'b', 60_000);
    const a = w.watcher('a');
    await a.refresh();
    expect(w.notices.escalations).toHaveLength(0);
    await w.store.releaseLease(`feed-recheck:${HOSTS.format}:${HOSTS.location}`, 'b');
    await a.refresh();
    expect(w.notices.escalations).toHaveLength(1);
    // A new instance that loads the same feed finds its digest applied: nothing is looked up again.
    const c = w.watcher('c');
    await c.refresh();
    expect(w.rechecked).toEqual([1]);
    expect(w.reputation.feeds.get(0)?.size).toBe(1);
  });

  it('keeps the last good entries when a feed cannot be read or parsed', async () => {
    const w = setup([PHISH]);
    const failures: string[] = [];
    const watcher = new FeedWatcher(
      [PHISH],
      w.reader,
      w.reputation,
      w.store,
      new LiveRecheck(w.store, w.links, w.reputation.feeds, w.store, w.notices, w.clock),
      {
        owner: 'a',
        leaseMs: 1000,
        onFailed: (_, e) => failures.push((e as Error).message),
      },
    );
    w.reader.put(PHISH.location, 'https://login.example/steal\n');
    await watcher.refresh();
    w.reader.put(PHISH.location, '<html>maintenance</html>');
    await watcher.refresh();
    w.reader.failing = true;
    await watcher.refresh();
    expect(failures).toEqual([expect.stringContaining('not a OpenPhish feed'), 'connection refused']);
    expect(w.reputation.feeds.judge('https://login.example/steal', 'login.example')).toMatchObject({ state: 'banned' });
  });
});
