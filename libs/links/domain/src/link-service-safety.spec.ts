import { SequenceCodeStrategy } from '@shortlink/link-codes';
import { CheckedUrl, ReputationVerdict, TargetReputation, UrlPolicy } from '@shortlink/url-policy';
import { toCachedLink } from './cached-link';
import { LinkHealth } from './link';
import { LinkService } from './link-service';
import { IdBlock, LinkObserver } from './ports';
import { SegmentIdAllocator } from './segment-id-allocator';
import { InMemoryLinkRepository } from './testing/in-memory-link-repository';
import { plainPasswords, RecordingChangeFeed, RecordingLinkCache } from './testing/in-memory-ports';
import { relayOver } from './testing/relay';

const sequence = () => {
  let next = 1n;
  return { allocateBlock: async (_: string, size: number): Promise<IdBlock> => ({ start: next, end: (next += BigInt(size)) }) };
};

/** A reputation that knows some URLs by substring, and records every target it was asked about. */
class ListedUrls implements TargetReputation {
  readonly asked: string[] = [];
  constructor(private readonly listed: Record<string, ReputationVerdict>) {}
  async judge(targets: readonly CheckedUrl[]): Promise<ReputationVerdict | null> {
    this.asked.push(...targets.map((t) => t.url));
    for (const t of targets) for (const [part, verdict] of Object.entries(this.listed)) if (t.url.includes(part)) return verdict;
    return null;
  }
}

class RecordingObserver {
  readonly stored: string[] = [];
  readonly removed: string[] = [];
  readonly port: LinkObserver = {
    stored: (links) => this.stored.push(...links.map((l) => l.code)),
    removed: (link) => this.removed.push(link.code),
  };
}

const BAN: ReputationVerdict = { state: 'banned', reason: 'URLhaus malware_download: https://evil.example/x.exe', source: 'feed:urlhaus' };
const FLAG: ReputationVerdict = { state: 'flagged', reason: 'listed host: https://ads.example/', source: 'feed:hosts' };

describe('LinkService and the safety of targets (docs/design.md, "Trust and safety")', () => {
  const setup = (listed: Record<string, ReputationVerdict> = {}) => {
    const repo = new InMemoryLinkRepository();
    const cache = new RecordingLinkCache();
    const feed = new RecordingChangeFeed();
    const reputation = new ListedUrls(listed);
    const observer = new RecordingObserver();
    const now = { t: Date.UTC(2026, 11, 7) };
    const service = new LinkService(
      {
        links: repo,
        ids: new SegmentIdAllocator(sequence(), 'links', 10),
        codes: new SequenceCodeStrategy('secret'),
        events: relayOver(repo, cache, feed, { clock: { now: () => now.t } }),
        passwords: plainPasswords,
        urls: new UrlPolicy({ shortDomains: ['sho.rt'] }),
        reputation,
        observer: observer.port,
        clock: { now: () => now.t },
      },
      { defaultDomain: 'sho.rt', sharedDomains: ['sho.rt'], retireForMs: 1000 },
    );
    return { service, repo, cache, feed, reputation, observer, now };
  };

  it('asks the reputation about every target of a create, and bans or flags the link with the verdict and its source', async () => {
    const { service, reputation, observer } = setup({ 'evil.example': BAN });
    const link = await service.create({
      tenantId: 't1',
      url: 'https://shop.example/a',
      variants: [
        { url: 'https://shop.example/b', weight: 1 },
        { url: 'https://evil.example/x.exe', weight: 1 },
      ],
      geoTargets: { DE: 'https://shop.example/de' },
      social: { title: 'x', image: 'https://cdn.example/i.png' },
    });
    expect(reputation.asked).toEqual(
      expect.arrayContaining([
        'https://shop.example/a',
        'https://shop.example/b',
        'https://evil.example/x.exe',
        'https://shop.example/de',
        'https://cdn.example/i.png',
      ]),
    );
    expect(link).toMatchObject({ moderation: 'banned', moderationReason: BAN.reason, moderationSource: 'feed:urlhaus' });
    expect(observer.stored).toEqual([link.code]);
  });

  it('judges a bare URL (the batch rows’ path) alike, and a verdict beats the URL policy’s own flag', async () => {
    const { service } = setup({ 'ads.example': FLAG, 'evil.example': BAN });
    const bare = await service.prepare({ tenantId: 't1', url: 'https://ads.example/' });
    expect(bare).toMatchObject({ moderation: 'flagged', moderationSource: 'feed:hosts' });
    // http + a phishing word: the policy flags it; the feed bans it, and the ban wins.
    const both = await service.prepare({ tenantId: 't1', url: 'http://evil.example/login' });
    expect(both).toMatchObject({ moderation: 'banned', moderationSource: 'feed:urlhaus' });
    const policyOnly = await service.prepare({ tenantId: 't1', url: 'http://honest.example/login' });
    expect(policyOnly).toMatchObject({ moderation: 'flagged', moderationSource: 'url-policy' });
    const clean = await service.prepare({ tenantId: 't1', url: 'https://honest.example/' });
    expect(clean).toMatchObject({ moderation: 'clear', moderationReason: null, moderationSource: null });
  });

  it('an edit that sets a listed target raises the moderation; nothing an edit sets lowers it', async () => {
    const { service, observer } = setup({ 'ads.example': FLAG, 'evil.example': BAN });
    const link = await service.create({ tenantId: 't1', url: 'https://shop.example/a' });
    const flagged = await service.update('t1', link, { deviceTargets: { ios: 'https://ads.example/app' } }, null);
    expect(flagged).toMatchObject({ moderation: 'flagged', moderationSource: 'feed:hosts', version: 2 });
    const banned = await service.update('t1', link, { url: 'https://evil.example/x.exe' }, null);
    expect(banned).toMatchObject({ moderation: 'banned', moderationSource: 'feed:urlhaus' });
    const still = await service.update('t1', link, { url: 'https://shop.example/clean', deviceTargets: null }, null);
    expect(still).toMatchObject({ moderation: 'banned', moderationSource: 'feed:urlhaus' });
    expect(observer.stored).toEqual([link.code, link.code, link.code, link.code]);
    await service.remove('t1', link, null);
    expect(observer.removed).toEqual([link.code]);
  });

  it('escalates a live link by a verdict only when it is stronger and no operator decided, and tells every redirect', async () => {
    const { service, cache, feed } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://shop.example/a' });
    const flagged = await service.escalate(link, link.id, FLAG);
    expect(flagged?.after).toMatchObject({ moderation: 'flagged', moderationSource: 'feed:hosts', version: 2 });
    expect(feed.published.at(-1)).toEqual({ domain: 'sho.rt', code: link.code, version: 2 });
    expect(cache.values.get(`sho.rt/${link.code}`)).toMatchObject({ moderation: 'flagged' });
    expect(await service.escalate(link, link.id, FLAG)).toBeNull(); // not stronger
    expect(await service.escalate(link, 'another-id', BAN)).toBeNull(); // another link under the code now
    expect((await service.escalate(link, link.id, BAN))?.after.moderation).toBe('banned');
    // An operator's decision stands against the feeds.
    await service.moderate(link, 'clear', null);
    expect((await service.get('t1', link)).moderationSource).toBe('operator');
    expect(await service.escalate(link, link.id, BAN)).toBeNull();
  });

  it('records health with a new version only when the broken targets change; a broken target reaches the cached link', async () => {
    const { service, feed, repo } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://shop.example/a', variants: [{ url: 'https://shop.example/b', weight: 1 }] });
    const at = new Date(Date.UTC(2026, 11, 7, 1));
    const ok: LinkHealth = { state: 'ok', since: at, brokenTargets: [], lastStatus: 200, lastError: null, checkedAt: at };
    const first = await service.recordHealth(link, link.id, ok);
    expect(first?.after).toMatchObject({ version: 1, health: ok });
    expect(feed.published).toEqual([]);
    const later = { ...ok, checkedAt: new Date(at.getTime() + 3_600_000), lastStatus: 204 };
    expect((await service.recordHealth(link, link.id, later))?.after.version).toBe(1);
    const broken: LinkHealth = { state: 'broken', since: at, brokenTargets: ['https://shop.example/b'], lastStatus: 404, lastError: null, checkedAt: at };
    const change = await service.recordHealth(link, link.id, broken);
    expect(change?.after).toMatchObject({ version: 2, health: broken });
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: link.code, version: 2 }]);
    expect(toCachedLink(repo.links.get(`sho.rt/${link.code}`)!).broken).toEqual(['https://shop.example/b']);
    expect(toCachedLink(link).broken).toBeUndefined();
    expect(await service.recordHealth(link, 'another-id', ok)).toBeNull();
  });
});
