import { SequenceCodeStrategy } from '@shortlink/link-codes';
import { UrlPolicy } from '@shortlink/url-policy';
import { toCachedLink } from './cached-link';
import { Link } from './link';
import { LinkService } from './link-service';
import { IdBlock } from './ports';
import { SegmentIdAllocator } from './segment-id-allocator';
import { checkTagTracking, tagConversionParamOf, TagTrackingStore } from './tag-tracking';
import { InMemoryLinkRepository } from './testing/in-memory-link-repository';
import { plainPasswords, RecordingChangeFeed, RecordingLinkCache } from './testing/in-memory-ports';
import { relayOver } from './testing/relay';

class MapTagTracking implements TagTrackingStore {
  readonly tags = new Map<string, Map<string, string>>();
  reads = 0;
  async trackedTags(tenantId: string) {
    this.reads++;
    return new Map(this.tags.get(tenantId) ?? []);
  }
  async setTagTracking(tenantId: string, tag: string, param: string | null) {
    const tags = this.tags.get(tenantId) ?? new Map<string, string>();
    this.tags.set(tenantId, tags);
    if (param === null) tags.delete(tag);
    else tags.set(tag, param);
  }
}

const sequence = () => {
  let next = 1n;
  return { allocateBlock: async (_: string, size: number): Promise<IdBlock> => ({ start: next, end: (next += BigInt(size)) }) };
};

/** Conversion tracking on a tag (docs/design.md, "Conversions"): resolved into the link, so the redirect's cached record needs no tags. */
describe('conversion tracking on a tag', () => {
  const setup = () => {
    const repo = new InMemoryLinkRepository();
    const cache = new RecordingLinkCache();
    const relay = relayOver(repo, cache, new RecordingChangeFeed(), {});
    const tagTracking = new MapTagTracking();
    const service = new LinkService(
      {
        links: repo,
        ids: new SegmentIdAllocator(sequence(), 'links', 10),
        codes: new SequenceCodeStrategy('secret'),
        events: relay,
        passwords: plainPasswords,
        urls: new UrlPolicy({ shortDomains: ['sho.rt'] }),
        tagTracking,
      },
      { defaultDomain: 'sho.rt', sharedDomains: ['sho.rt'], retireForMs: 0 },
    );
    /** The rules the redirect gets: what the caches were last told of the link. */
    const served = (link: Link) => toCachedLink(cache.values.get(`sho.rt/${link.code}`) as Link).rules;
    return { service, repo, cache, tagTracking, served };
  };

  it('the first tracked tag of the link, in its order, names the parameter; none tracked: null', () => {
    const tracked = new Map([
      ['b', 'cid_b'],
      ['c', 'cid_c'],
    ]);
    expect(tagConversionParamOf(['a', 'c', 'b'], tracked)).toBe('cid_c');
    expect(tagConversionParamOf(['a'], tracked)).toBeNull();
    expect(tagConversionParamOf([], tracked)).toBeNull();
    expect(tagConversionParamOf(['a'], new Map())).toBeNull();
  });

  it('switching a tag on rewrites its links as edits (the caches told), switching off takes it away again; other links and tenants untouched', async () => {
    const { service, repo, tagTracking, served } = setup();
    const tagged = await Promise.all([0, 1, 2].map((i) => service.create({ tenantId: 't1', url: `https://example.com/${i}`, tags: ['spring', 'x'] })));
    const other = await service.create({ tenantId: 't1', url: 'https://example.com/o', tags: ['autumn'] });
    const elsewhere = await service.create({ tenantId: 't2', url: 'https://example.com/t2', tags: ['spring'] });
    expect(toCachedLink(tagged[0]).rules).toBeUndefined();

    const on = await service.setTagTracking('t1', 'spring', { trackConversions: true });
    expect(on).toEqual({ tag: 'spring', trackConversions: true, conversionParam: 'sl_cid', linksUpdated: 3 });
    expect([...tagTracking.tags.get('t1')!]).toEqual([['spring', 'sl_cid']]);
    for (const link of tagged) {
      const stored = repo.links.get(`sho.rt/${link.code}`)!;
      expect(stored).toMatchObject({ tagConversionParam: 'sl_cid', version: 2, trackConversions: false });
      expect(served(link)).toEqual({ clickIdParam: 'sl_cid' });
    }
    expect(repo.links.get(`sho.rt/${other.code}`)!.version).toBe(1);
    expect(repo.links.get(`sho.rt/${elsewhere.code}`)!.tagConversionParam ?? null).toBeNull();
    expect(await service.tagSettings('t1', 'spring')).toEqual({ tag: 'spring', trackConversions: true, conversionParam: 'sl_cid' });
    expect(await service.tagSettings('t2', 'spring')).toEqual({ tag: 'spring', trackConversions: false, conversionParam: 'sl_cid' });

    // Again with the same setting: nothing left to resolve. Another parameter: every link again.
    expect((await service.setTagTracking('t1', 'spring', { trackConversions: true })).linksUpdated).toBe(0);
    expect((await service.setTagTracking('t1', 'spring', { trackConversions: true, conversionParam: 'ref' })).linksUpdated).toBe(3);
    expect(served(tagged[1])).toEqual({ clickIdParam: 'ref' });

    const off = await service.setTagTracking('t1', 'spring', { trackConversions: false });
    expect(off).toEqual({ tag: 'spring', trackConversions: false, conversionParam: 'sl_cid', linksUpdated: 3 });
    for (const link of tagged) expect(served(link)).toBeUndefined();
  });

  it('a link tagged later gets it, one that loses the tag loses it; a link of its own keeps its own parameter', async () => {
    const { service, served } = setup();
    await service.setTagTracking('t1', 'spring', { trackConversions: true, conversionParam: 'cid' });
    const created = await service.create({ tenantId: 't1', url: 'https://example.com/new', tags: ['spring'] });
    expect(created.tagConversionParam).toBe('cid');
    expect(toCachedLink(created).rules).toEqual({ clickIdParam: 'cid' });

    const later = await service.create({ tenantId: 't1', url: 'https://example.com/later', title: 'not yet' });
    expect(toCachedLink(later).rules).toBeUndefined();
    const tagged = await service.update('t1', later, { tags: ['other', 'spring'] }, null);
    expect(served(tagged)).toEqual({ clickIdParam: 'cid' });
    // An edit of something else keeps it.
    expect(served(await service.update('t1', later, { title: 'still' }, null))).toEqual({ clickIdParam: 'cid' });
    const untagged = await service.update('t1', later, { tags: ['other'] }, null);
    expect(untagged.tagConversionParam).toBeNull();
    expect(served(untagged)).toBeUndefined();

    const own = await service.create({ tenantId: 't1', url: 'https://example.com/own', tags: ['spring'], trackConversions: true, conversionParam: 'mine' });
    expect(toCachedLink(own).rules).toEqual({ clickIdParam: 'mine' });
  });

  it('concurrent creates of a tenant share one read of its tracked tags; the next create reads again', async () => {
    const { service, tagTracking } = setup();
    await Promise.all([0, 1, 2, 3].map((i) => service.create({ tenantId: 't1', url: `https://example.com/${i}`, tags: ['spring'] })));
    expect(tagTracking.reads).toBe(1);
    await service.setTagTracking('t1', 'spring', { trackConversions: true });
    const next = await service.create({ tenantId: 't1', url: 'https://example.com/next', tags: ['spring'] });
    expect(next.tagConversionParam).toBe('sl_cid');
  });

  it('switches every link of a tag past one page, reads the settings after its own write (not a read begun before), and answers 503 when the store is down', async () => {
    const { service, tagTracking, served } = setup();
    const links = [];
    for (let i = 0; i < 205; i++) links.push(await service.create({ tenantId: 't1', url: `https://example.com/p${i}`, tags: ['bulk'] }));
    // A create's read in flight when the switch begins: the switch must not take its (older) answer.
    let release!: () => void;
    const slow = tagTracking.trackedTags.bind(tagTracking);
    tagTracking.trackedTags = async (tenantId: string) => {
      const answer = await slow(tenantId);
      if (tenantId === 't1' && !release) await new Promise<void>((r) => (release = r));
      return answer;
    };
    const pending = service.create({ tenantId: 't1', url: 'https://example.com/racing', tags: ['bulk'] });
    await new Promise((r) => setImmediate(r));
    const switched = service.setTagTracking('t1', 'bulk', { trackConversions: true });
    await new Promise((r) => setTimeout(r, 10));
    release();
    expect((await switched).linksUpdated).toBe(205);
    for (const link of [links[0], links[204]]) expect(served(link)).toEqual({ clickIdParam: 'sl_cid' });
    // The create that read before the switch was stored: switching again resolves it too.
    const racing = await pending;
    expect(racing.tagConversionParam ?? null).toBeNull();
    expect((await service.setTagTracking('t1', 'bulk', { trackConversions: true })).linksUpdated).toBe(1);
    expect(served(racing)).toEqual({ clickIdParam: 'sl_cid' });

    tagTracking.setTagTracking = async () => Promise.reject(new Error('meta down'));
    await expect(service.setTagTracking('t1', 'bulk', { trackConversions: false })).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    tagTracking.trackedTags = async () => Promise.reject(new Error('meta down'));
    await expect(service.create({ tenantId: 't1', url: 'https://example.com/down', tags: ['bulk'] })).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
  });

  it('refuses a bad tag, a missing or non-boolean trackConversions and a bad parameter with VALIDATION_FAILED and its field', async () => {
    const { service } = setup();
    const cases: Array<[unknown, Record<string, unknown>, string]> = [
      ['', { trackConversions: true }, 'tag'],
      ['-starts-badly', { trackConversions: true }, 'tags'],
      ['x'.repeat(51), { trackConversions: true }, 'tags'],
      ['spring', {}, 'trackConversions'],
      ['spring', { trackConversions: 'yes' }, 'trackConversions'],
      ['spring', { trackConversions: true, conversionParam: '1abc' }, 'conversionParam'],
    ];
    for (const [tag, edit, field] of cases) {
      await expect(service.setTagTracking('t1', tag, edit)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field } });
    }
    expect(checkTagTracking(' spring ', { trackConversions: false })).toEqual({ tag: 'spring', param: null });
  });
});
