import type { Link } from '@shortlink/links-domain';
import { LinkTagCache, matches, matchesPlainly } from './live-filter';

const click = { domain: 'sho.rt', code: 'abc', linkId: 'L1', bot: false };
const noTags = { tagsOf: async () => [] as string[] };

describe('live stream filters', () => {
  it('match by code, domain and bots, each only when given', () => {
    expect(matchesPlainly({ bots: 'exclude' }, click)).toBe(true);
    expect(matchesPlainly({ code: 'abc', domain: 'sho.rt', bots: 'exclude' }, click)).toBe(true);
    expect(matchesPlainly({ code: 'abd', bots: 'exclude' }, click)).toBe(false);
    expect(matchesPlainly({ code: 'ABC', bots: 'exclude' }, click)).toBe(false);
    expect(matchesPlainly({ domain: 'other.example', bots: 'exclude' }, click)).toBe(false);
    const bot = { ...click, bot: true };
    expect([matchesPlainly({ bots: 'exclude' }, bot), matchesPlainly({ bots: 'include' }, bot), matchesPlainly({ bots: 'only' }, bot)]).toEqual([
      false,
      true,
      true,
    ]);
    expect(matchesPlainly({ bots: 'only' }, click)).toBe(false);
  });

  it('match a tag by the link’s tags, asked only when the other filters passed', async () => {
    const asked: string[] = [];
    const tags = { tagsOf: async (c: { code: string }) => (asked.push(c.code), ['promo', 'q4']) };
    expect(await matches({ tag: 'promo', bots: 'exclude' }, click, tags)).toBe(true);
    expect(await matches({ tag: 'other', bots: 'exclude' }, click, tags)).toBe(false);
    expect(await matches({ tag: 'promo', code: 'zzz', bots: 'exclude' }, click, tags)).toBe(false);
    expect(asked).toEqual(['abc', 'abc']);
    expect(await matches({ bots: 'exclude' }, click, noTags)).toBe(true);
  });
});

describe('LinkTagCache', () => {
  let now = 0;
  const link = (id: string, tags: string[]) => ({ id, tags }) as unknown as Link;

  it('reads a link’s tags once per TTL, shares a read in flight, and reads again after the TTL', async () => {
    let reads = 0;
    let tags = ['a'];
    const cache = new LinkTagCache({ findByCode: async () => (reads++, link('L1', tags)) }, { ttlMs: 1000, now: () => now });
    expect(await Promise.all([cache.tagsOf(click), cache.tagsOf(click)])).toEqual([['a'], ['a']]);
    expect(reads).toBe(1);
    tags = ['b'];
    now += 999;
    expect(await cache.tagsOf(click)).toEqual(['a']);
    now += 2;
    expect(await cache.tagsOf(click)).toEqual(['b']);
    expect(reads).toBe(2);
  });

  it('reads again for another link of the same code (deleted and made again)', async () => {
    const cache = new LinkTagCache({ findByCode: async () => link('L2', ['new']) }, { now: () => now });
    expect(await cache.tagsOf({ ...click, linkId: 'L1' })).toEqual(['new']);
    expect(await cache.tagsOf({ ...click, linkId: 'L2' })).toEqual(['new']);
  });

  it('gives no tags for a link that is gone, and for a failed read, which it does not keep', async () => {
    let fail = true;
    const cache = new LinkTagCache({ findByCode: async () => (fail ? Promise.reject(new Error('shard down')) : link('L1', ['x'])) }, { now: () => now });
    expect(await cache.tagsOf(click)).toEqual([]);
    fail = false;
    expect(await cache.tagsOf(click)).toEqual(['x']);
    const gone = new LinkTagCache({ findByCode: async () => null }, { now: () => now });
    expect(await gone.tagsOf(click)).toEqual([]);
  });

  it('holds at most maxEntries links, dropping the oldest read', async () => {
    let reads = 0;
    const cache = new LinkTagCache({ findByCode: async (id) => (reads++, link('L1', [id.code])) }, { maxEntries: 2, now: () => now });
    for (const code of ['a', 'b', 'c']) await cache.tagsOf({ ...click, code });
    await cache.tagsOf({ ...click, code: 'c' });
    expect(reads).toBe(3);
    await cache.tagsOf({ ...click, code: 'a' });
    expect(reads).toBe(4);
  });
});
