import { Link, LinkRepository, NO_OPTIONS } from '@shortlink/links-domain';
import { BloomFilter, planGeneration } from './bloom-filter';
import { BloomMaintainer } from './bloom-maintainer';
import { CacheKeys } from './cache-keys';
import { CachedLinkWriter } from './cached-link-writer';
import { CachePolicy } from './cache-policy';
import { InMemoryCache } from './testing/in-memory-cache-store';

const link = (code: string, over: Partial<Link> = {}): Link => ({
  ...NO_OPTIONS,
  id: code.length.toString(),
  domain: 'sho.rt',
  code,
  targetUrl: `https://example.com/${code}`,
  tenantId: 't',
  createdAt: new Date(0),
  updatedAt: new Date(0),
  expiresAt: null,
  status: 'active',
  redirectType: 302,
  version: 1,
  moderation: 'clear',
  moderationReason: null,
  ...over,
});

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
    const calls = jest.spyOn(store, 'deleteAndSetBits');
    const links = [link('aaaaaaa'), link('bbbbbbb')];
    await writer.created(links);
    const written = calls.mock.calls.flatMap(([, bits]) => bits.map((b) => b.key));
    expect(written.length).toBeGreaterThan(0);
    expect(written.every((key) => key.startsWith('short:bloom:links:g1:'))).toBe(true);
  });

  it('drops the null entries a scan left for new links, with their Bloom bits, in one call for a batch chunk', async () => {
    const { store, bloom, writer } = await setup();
    const links = [link('aaaaaaa'), link('bbbbbbb'), link('ccccccc')];
    for (const l of links) store.values.set(CacheKeys.link(l), '');
    const calls = jest.spyOn(store, 'deleteAndSetBits');
    const bits = bloom.bitsOf(links);
    expect(bits.length).toBeGreaterThan(0);
    expect(bits.every((b) => b.key.startsWith('short:bloom:links:g1:'))).toBe(true);
    await writer.created(links);
    expect(calls.mock.calls).toEqual([[links.map((l) => CacheKeys.link(l)), bits]]);
    expect(links.filter((l) => store.values.has(CacheKeys.link(l)))).toEqual([]);
  });

  it('leaves the Bloom bits of a chunk to the background when the cache is down, and never fails the create', async () => {
    const { store, bloom, writer } = await setup();
    const retried = jest.spyOn(bloom, 'retryLater');
    store.down = true;
    const links = [link('ddddddd'), link('eeeeeee')];
    await expect(writer.created(links)).resolves.toBeUndefined();
    expect(retried).toHaveBeenCalledWith(links);
    await bloom.close();
  });

  it('writes an edited link through, never over a newer version, and a tombstone for a deleted one', async () => {
    const { store, writer } = await setup();
    await writer.updated(link('fffffff', { targetUrl: 'https://example.com/new', version: 3 }));
    await writer.updated(link('fffffff', { targetUrl: 'https://example.com/old', version: 2 }));
    expect(JSON.parse(store.values.get(CacheKeys.link(link('fffffff')))!)).toMatchObject({ targetUrl: 'https://example.com/new', version: 3 });
    await writer.deleted({ domain: 'sho.rt', code: 'fffffff' }, 4);
    expect(JSON.parse(store.values.get(CacheKeys.link(link('fffffff')))!)).toEqual({ gone: true, version: 4 });
    store.down = true;
    await expect(writer.updated(link('fffffff', { version: 5 }))).rejects.toThrow(/ECONNREFUSED/);
  });

  it('forgets a link whatever version the cache holds (a write that may or may not have committed), so a lookup reads the shard again', async () => {
    const { store, writer } = await setup();
    await writer.updated(link('ggggggg', { version: 7 }));
    await writer.forget({ domain: 'sho.rt', code: 'ggggggg' });
    expect(store.values.has(CacheKeys.link(link('ggggggg')))).toBe(false);
    await writer.updated(link('ggggggg', { targetUrl: 'https://example.com/older', version: 6 }));
    expect(JSON.parse(store.values.get(CacheKeys.link(link('ggggggg')))!)).toMatchObject({ targetUrl: 'https://example.com/older', version: 6 });
  });
});
