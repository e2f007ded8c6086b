import { parseFeed } from './feed-formats';
import { urlHashOf } from './health';
import { LiveRecheck } from './live-recheck';
import { FeedSet } from './reputation';
import { SafetySweep, TargetIndexer } from './target-indexer';
import { safetyWorld } from './testing';
import { ThreatIndex } from './threats';

describe('the index of link targets by host (docs/design.md, "Trust and safety")', () => {
  it('follows creates, edits and deletes in the background, the latest change of a link winning; a failed write is tried again', async () => {
    jest.useFakeTimers();
    try {
      const w = safetyWorld();
      const failures: string[] = [];
      const indexer = new TargetIndexer(w.store, { onFailed: (e) => failures.push((e as Error).message) }, w.clock);
      const link = await w.service.create({ tenantId: 't1', url: 'https://a.example/x', geoTargets: { DE: 'https://b.example/de' } });
      indexer.stored([link]);
      const told: string[][] = [];
      indexer.afterIndexed((ids) => told.push([...ids]));
      await indexer.idle();
      expect(told).toEqual([[link.id]]); // after the write: the first checks find its targets
      expect([...w.store.links.get(link.id)!.targets.values()].sort()).toEqual(['a.example', 'b.example']);
      expect((await w.store.linksOnHosts({ covering: ['a.example'], exact: [] }, null, 10)).map((r) => r.code)).toEqual([link.code]);
      expect(await w.store.linksOnHosts({ covering: ['x.a.example'], exact: ['example'] }, null, 10)).toEqual([]);
      expect((await w.store.linksOnHosts({ covering: [], exact: ['b.example'] }, null, 10)).map((r) => r.code)).toEqual([link.code]);
      // An edit, then a delete, queued while the meta database refuses writes: nothing lost, the delete wins.
      const index = w.store.index.bind(w.store);
      w.store.index = async () => {
        throw new Error('meta database down');
      };
      const edited = await w.service.update('t1', link, { geoTargets: null }, null);
      indexer.stored([edited]);
      await indexer.idle();
      expect(failures).toEqual(['meta database down']);
      w.store.index = index;
      indexer.removed(edited);
      await jest.advanceTimersByTimeAsync(1000);
      await indexer.idle();
      expect(w.store.links.has(link.id)).toBe(false);
      await indexer.stop();
    } finally {
      jest.useRealTimers();
    }
  });

  it('a sweep indexes links it never heard of and judges them by the feeds, paced to its rate', async () => {
    const w = safetyWorld();
    const links = [];
    for (let i = 0; i < 7; i++) links.push(await w.service.create({ tenantId: 't1', url: `https://h${i}.example/` }));
    const feeds = new FeedSet();
    feeds.set(0, new ThreatIndex({ format: 'hosts', location: 'x', action: 'flagged' }, parseFeed('hosts', 'h3.example\n')));
    const pauses: number[] = [];
    const sweep = new SafetySweep(
      w.repo,
      w.store,
      new LiveRecheck(w.store, w.links, feeds, w.store, w.notices, w.clock),
      { linksPerSecond: 2, pageSize: 3, pause: async (ms) => void pauses.push(ms) },
      w.clock,
    );
    expect(await sweep.pass()).toEqual({ links: 7, escalated: 1 });
    expect(w.store.links.size).toBe(7);
    expect(w.store.targets.has(urlHashOf('https://h6.example/'))).toBe(true);
    expect((await w.repo.findByCode(links[3]))?.moderation).toBe('flagged');
    // Pages of at most 3 (per shard) at 2 links a second, the clock standing still: 7 links, 3.5 s of pauses.
    expect(pauses.reduce((a, b) => a + b, 0)).toBe(3500);
    expect(Math.max(...pauses)).toBe(1500);
  });
});
