import { LinkRepository } from '@shortlink/links-domain';
import { aTestLink } from '@shortlink/links-domain/testing';
import { BloomFilter, planGeneration } from './bloom-filter';
import { BloomMaintainer } from './bloom-maintainer';
import { CacheKeys } from './cache-keys';
import { CachedLinkWriter } from './cached-link-writer';
import { CachePolicy } from './cache-policy';
import { InMemoryCache } from './testing/in-memory-cache-store';

const link = aTestLink;

describe('CachedLinkWriter', () => {
  const setup = async () => {
    const store = new InMemoryCache();
    const filter = new BloomFilter(store, { capacity: 1000, falsePositiveRate: 0.01, partitions: 4 });
    // A layout of one open generation, as the redirect publishes it.
    await filter.publish([planGeneration('g1', 1000, 0.005, 4, 'ready')]);
    const bloom = new BloomMaintainer(filter, store, {} as LinkRepository);
    return { store, bloom, writer: new CachedLinkWriter(store, bloom, new CachePolicy('lru')) };
  };

  it('on an in-process store, a batch chunk reads the layout first: a writer that read "no filter" before the first build marks its links', async () => {
    const store = new InMemoryCache();
    const writerFilter = new BloomFilter(store, { capacity: 1000, falsePositiveRate: 0.01, partitions: 4 });
    expect(await writerFilter.refresh()).toBeNull();
    // The first build, by another instance of the process, right after the writer's read.
    const builder = new BloomFilter(store, { capacity: 1000, falsePositiveRate: 0.01, partitions: 4 });
    await builder.publish([planGeneration('g1', 1000, 0.005, 4, 'ready')]);
    const bloom = new BloomMaintainer(writerFilter, store, {} as LinkRepository, { storeInProcess: true });
    const writer = new CachedLinkWriter(store, bloom, new CachePolicy('lru'));
    const calls = jest.spyOn(store, 'dropNullsAndSetBits');
    const links = [link('aaaaaaa'), link('bbbbbbb')];
    await writer.created(links);
    const written = calls.mock.calls.flatMap(([, bits]) => bits.map((b) => b.key));
    expect(written.length).toBeGreaterThan(0);
    expect(written.every((key) => key.startsWith('short:bloom:links:g1:'))).toBe(true);
  });

  it('drops the null entries a scan left for new links (never a value or a tombstone), with their Bloom bits, in one call for a batch chunk', async () => {
    const { store, bloom, writer } = await setup();
    const links = [link('aaaaaaa'), link('bbbbbbb'), link('ccccccc')];
    for (const l of links) store.values.set(CacheKeys.link(l), '');
    store.values.set(CacheKeys.link(links[2]), JSON.stringify({ gone: true, version: 2 })); // deleted meanwhile
    const calls = jest.spyOn(store, 'dropNullsAndSetBits');
    const bits = bloom.bitsOf(links);
    expect(bits.length).toBeGreaterThan(0);
    expect(bits.every((b) => b.key.startsWith('short:bloom:links:g1:'))).toBe(true);
    await writer.created(links.map(({ domain, code }) => ({ domain, code })));
    expect(calls.mock.calls).toEqual([[links.map((l) => CacheKeys.link(l)), bits]]);
    expect(links.filter((l) => store.values.has(CacheKeys.link(l)))).toEqual([links[2]]);
  });

  it('fails a create’s delivery while the cache is down (the outbox relay delivers it again), and one without a Bloom filter yet marks nothing', async () => {
    const { store, writer } = await setup();
    store.down = true;
    await expect(writer.created([link('ddddddd'), link('eeeeeee')])).rejects.toThrow(/ECONNREFUSED/);
    await expect(writer.created([link('ddddddd')])).rejects.toThrow(/ECONNREFUSED/);
    const bare = new InMemoryCache();
    const unbuilt = new BloomFilter(bare, { capacity: 1000, falsePositiveRate: 0.01, partitions: 4 });
    await unbuilt.refresh(); // read: no layout at all
    const none = new CachedLinkWriter(bare, new BloomMaintainer(unbuilt, bare, {} as LinkRepository), new CachePolicy('lru'));
    bare.values.set(CacheKeys.link(link('fffffff')), '');
    await none.created([link('fffffff')]);
    expect(bare.values.has(CacheKeys.link(link('fffffff')))).toBe(false);
  });

  it('writes an edited link through, never over a newer version, and a tombstone for a deleted one, each within the maximum TTL; says what it holds', async () => {
    const { store, writer } = await setup();
    expect(await writer.updated(link('fffffff', { targetUrl: 'https://example.com/new', version: 3 }))).toBe(true);
    expect(await writer.updated(link('fffffff', { targetUrl: 'https://example.com/old', version: 2 }))).toBe(false);
    expect(JSON.parse(store.values.get(CacheKeys.link(link('fffffff')))!)).toMatchObject({ targetUrl: 'https://example.com/new', version: 3 });
    expect(store.ttls.get(CacheKeys.link(link('fffffff')))).toBeLessThanOrEqual(3_600_000);
    expect(await writer.holds(link('fffffff'), 3)).toBe(true);
    expect(await writer.holds(link('fffffff'), 4)).toBe(false);
    expect(await writer.deleted({ domain: 'sho.rt', code: 'fffffff' }, 4)).toBe(true);
    expect(await writer.deleted({ domain: 'sho.rt', code: 'fffffff' }, 4)).toBe(false);
    expect(JSON.parse(store.values.get(CacheKeys.link(link('fffffff')))!)).toEqual({ gone: true, version: 4 });
    expect(store.ttls.get(CacheKeys.link(link('fffffff')))).toBe(600_000);
    expect(await writer.holds(link('fffffff'), 4)).toBe(true);
    expect(await writer.holds(link('ggggggg'), 1)).toBe(false);
    store.down = true;
    await expect(writer.updated(link('fffffff', { version: 5 }))).rejects.toThrow(/ECONNREFUSED/);
  });
});
