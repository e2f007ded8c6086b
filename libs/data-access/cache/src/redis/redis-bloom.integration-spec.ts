import { randomUUID } from 'crypto';
import { LinkRepository, ShortUrlIdentifier } from '@shortlink/links-domain';
import { BloomFilter, BloomMaintainer, BloomOptions } from '@shortlink/read-path';
import { redisClusterNodes as nodes } from '@shortlink/testing';
import { RedisClusterStore } from './redis-cluster-store';

/**
 * The scalable Bloom filter on the real Redis Cluster (docs/design.md, "Redirect read path"): three
 * instances, each with its own connection, as three apps would be: one changes the layout, one
 * writes links, one reads. The reader picks up every layout change by itself and never says "no"
 * for a link written. A layout of its own (keySpace), so that the stack's filter is left alone.
 */
describe('scalable Bloom filter on the real Redis Cluster', () => {
  const DOMAIN = 'bloom.test';
  const space = `it-${randomUUID()}:`;
  const options: BloomOptions = { capacity: 5000, falsePositiveRate: 0.01, partitions: 8, growth: 2, refreshMs: 50, keySpace: space };
  const stores: RedisClusterStore[] = [];
  const items: string[] = [];
  const item = (i: number) => `${DOMAIN}/in${i}`;
  const repository = {
    async *identifierPages(size: number): AsyncGenerator<ShortUrlIdentifier[]> {
      for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size).map((it) => ({ domain: DOMAIN, code: it.slice(DOMAIN.length + 1) }));
    },
  } as unknown as LinkRepository;
  const instances: BloomMaintainer[] = [];
  const instance = async () => {
    const store = new RedisClusterStore({ nodes: nodes() });
    stores.push(store);
    await store.ping();
    const maintainer = new BloomMaintainer(new BloomFilter(store, options), store, repository);
    instances.push(maintainer);
    await maintainer.filter.follow();
    return maintainer;
  };
  const answers = async (filter: BloomFilter, list: readonly string[]) => {
    const counts: Record<string, number> = {};
    for (let i = 0; i < list.length; i += 500) {
      for (const a of await Promise.all(list.slice(i, i + 500).map((it) => filter.check(it)))) counts[a] = (counts[a] ?? 0) + 1;
    }
    return counts;
  };

  afterAll(async () => {
    const [first] = instances;
    for (const m of instances) await m.close();
    if (first) {
      const seen = new Set(first.filter.view()?.generations.flatMap((g) => first.filter.partitionKeys(g)) ?? []);
      await stores[0].del([...seen, first.filter.layoutKey, first.filter.lockKey]).catch(() => undefined);
    }
    await Promise.all(stores.map((s) => s.close()));
  });

  it('grows while a writer and a reader run, compacts on a rebuild, and the reader never says "no" for a written link', async () => {
    const changer = await instance();
    const writer = await instance();
    const reader = await instance();
    expect((await changer.rebuild()).outcome).toBe('built');
    await reader.filter.refresh();
    const seenLayouts = new Set<number>();
    const wrong: string[] = [];
    for (let n = 0; n < 25_000; n += 1000) {
      const chunk = Array.from({ length: 1000 }, (_, j) => item(n + j));
      items.push(...chunk);
      await writer.filter.addMany(chunk);
      const growing = changer.growIfFull();
      // Read everything written so far while the layout may be changing.
      const counts = await answers(
        reader.filter,
        items.filter((_, i) => i % 5 === 0 || i >= n),
      );
      if (counts.no || counts.unknown) wrong.push(`${n}: ${JSON.stringify(counts)}`);
      await growing;
      seenLayouts.add(reader.filter.view()?.version ?? 0);
    }
    expect(wrong).toEqual([]);
    const grown = reader.filter.view()!;
    expect(grown.generations.length).toBeGreaterThanOrEqual(3);
    expect(seenLayouts.size).toBeGreaterThanOrEqual(3);
    let passed = 0;
    const probes = Array.from({ length: 10_000 }, (_, i) => `${DOMAIN}/out${i}`);
    for (const [a, n] of Object.entries(await answers(reader.filter, probes))) if (a !== 'no') passed += n;
    expect(passed / probes.length).toBeLessThanOrEqual(options.falsePositiveRate);

    const report = await changer.rebuild(2000);
    expect(report).toMatchObject({ outcome: 'built', links: 25_000 });
    await new Promise((r) => setTimeout(r, reader.filter.refreshMs * 3));
    const compacted = reader.filter.view()!;
    expect(compacted.generations).toHaveLength(1);
    expect(compacted.generations[0].capacity).toBeGreaterThanOrEqual(33_000); // 1.5 × the links estimated (25 000)
    expect(await answers(reader.filter, items)).toEqual({ maybe: items.length });
    // The old generations' bitmaps are gone from the cluster.
    for (const g of grown.generations) expect(await stores[0].countBits(reader.filter.partitionKeys(g)[0], 0, -1)).toBe(0);
  }, 120_000);
});
