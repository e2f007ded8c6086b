import { DomainError, ErrorCode } from '@shortlink/core';
import { SegmentIdAllocator } from './segment-id-allocator';
import { SequenceCodeStrategy } from '@shortlink/link-codes';
import { Link, ShortUrlIdentifier } from './link';
import { LinkService } from './link-service';
import { toCachedLink } from './cached-link';
import { IdBlock } from './ports';
import { InMemoryLinkRepository } from './testing/in-memory-link-repository';
import { plainPasswords, RecordingChangeFeed, RecordingLinkCache } from './testing/in-memory-ports';
import { relayOver } from './testing/relay';
import { parseTarget, UrlPolicy } from '@shortlink/url-policy';

const sequence = () => {
  let next = 1n;
  return { allocateBlock: async (_: string, size: number): Promise<IdBlock> => ({ start: next, end: (next += BigInt(size)) }) };
};

const DAY = 86_400_000;

describe('LinkService', () => {
  const setup = <R extends InMemoryLinkRepository = InMemoryLinkRepository>(now = { t: Date.UTC(2026, 11, 3) }, repo = new InMemoryLinkRepository() as R) => {
    const cache = new RecordingLinkCache();
    const feed = new RecordingChangeFeed();
    const relay = relayOver(repo, cache, feed, { clock: { now: () => now.t } });
    const codes = new SequenceCodeStrategy('secret');
    const service = new LinkService(
      {
        links: repo,
        ids: new SegmentIdAllocator(sequence(), 'links', 10),
        codes,
        events: relay,
        passwords: plainPasswords,
        urls: new UrlPolicy({ shortDomains: ['sho.rt', 'go.example'] }),
        tenantDomains: { owns: async (tenant, domain) => tenant === 't1' && domain === 'own.example' },
        clock: { now: () => now.t },
      },
      { defaultDomain: 'sho.rt', sharedDomains: ['sho.rt', 'go.example'], retireForMs: 90 * DAY },
    );
    const cached = (code: string, domain = 'sho.rt') => cache.values.get(`${domain}/${code}`);
    return { service, repo, cache, relay, feed, codes, now, cached };
  };

  it('stores a generated link and tells the read path of it (a null entry for its code goes, the Bloom filter learns it)', async () => {
    const { service, repo, cache } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/x' });
    const second = await service.create({ tenantId: 't1', url: 'https://example.com/y' });
    expect(link.code).toMatch(/^[0-9a-zA-Z]{7}$/);
    expect(repo.links.get(`sho.rt/${link.code}`)).toEqual(link);
    expect(link).toMatchObject({ version: 1, status: 'active', moderation: 'clear', tags: [], forwardQuery: true });
    expect(cache.newLinks).toEqual([link, second].map((l) => ({ domain: l.domain, code: l.code })));
  });

  it('chooses the code again when the shard of a generated one is down; an alias there gets SHARD_UNAVAILABLE (docs/design.md, "Failure containment")', async () => {
    const { service, repo } = setup();
    repo.down.add('b');
    const links = await Promise.all(Array.from({ length: 20 }, (_, i) => service.create({ tenantId: 't1', url: `https://example.com/r${i}` })));
    expect(links.map((l) => repo.shardOf(l.code))).toEqual(links.map(() => 'a'));
    expect(repo.links.size).toBe(20);
    let alias = 'onb0';
    for (let i = 0; repo.shardOf(alias) !== 'b'; i++) alias = `onb${i}`;
    const onDownShard = service.create({ tenantId: 't1', url: 'https://example.com/alias', alias });
    await expect(onDownShard).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE', details: { shard: 'b' } });
    repo.down.add('a');
    await expect(service.create({ tenantId: 't1', url: 'https://example.com/none' })).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE' });
  });

  it('validates and stores every option, keeping only a hash of the password', async () => {
    const { service } = setup();
    const link = await service.create({
      tenantId: 't1',
      url: 'https://example.com/x',
      title: ' Spring sale ',
      tags: ['promo', 'spring', 'promo'],
      maxClicks: 100,
      password: 'hunter22',
      utm: { source: 'news', campaign: 'spring' },
      forwardQuery: false,
      geoTargets: { de: 'https://example.de/', US: 'https://example.com/us' },
      deviceTargets: { ios: 'https://apps.apple.com/app/x', android: 'https://play.google.com/store/apps/x' },
      variants: [
        { url: 'https://example.com/a', weight: 3 },
        { url: 'https://example.com/b', weight: 1 },
      ],
      clicksPerIpPerMinute: 5,
    });
    expect(link).toMatchObject({
      title: 'Spring sale',
      tags: ['promo', 'spring'],
      maxClicks: 100,
      passwordHash: 'plain:hunter22',
      utm: { source: 'news', campaign: 'spring' },
      forwardQuery: false,
      // The shorthand as rules: countries, then devices (docs/design.md, "Redirect rules").
      redirectRules: [
        { url: 'https://example.de/', conditions: [{ type: 'country', value: 'DE' }] },
        { url: 'https://example.com/us', conditions: [{ type: 'country', value: 'US' }] },
        { url: 'https://apps.apple.com/app/x', conditions: [{ type: 'device', value: 'ios' }] },
        { url: 'https://play.google.com/store/apps/x', conditions: [{ type: 'device', value: 'android' }] },
      ],
      clicksPerIpPerMinute: 5,
    });
    expect(JSON.stringify(link)).not.toContain('"hunter22"');
  });

  it('conversion tracking: off by default; trackConversions and conversionParam stored, edited and cleared; the cached rules carry the parameter', async () => {
    const { service } = setup();
    const plain = await service.create({ tenantId: 't1', url: 'https://example.com/plain' });
    expect(plain).toMatchObject({ trackConversions: false, conversionParam: null });
    expect(toCachedLink(plain).rules).toBeUndefined();
    const tracked = await service.create({ tenantId: 't1', url: 'https://example.com/t', trackConversions: true });
    expect(tracked).toMatchObject({ trackConversions: true, conversionParam: null });
    expect(toCachedLink(tracked).rules).toEqual({ clickIdParam: 'sl_cid' });
    const renamed = await service.update('t1', tracked, { conversionParam: 'ref_id' }, null);
    expect(renamed).toMatchObject({ trackConversions: true, conversionParam: 'ref_id' });
    expect(toCachedLink(renamed).rules).toEqual({ clickIdParam: 'ref_id' });
    const off = await service.update('t1', tracked, { trackConversions: null, conversionParam: null }, null);
    expect(off).toMatchObject({ trackConversions: false, conversionParam: null });
    for (const bad of [{ trackConversions: 'yes' }, { conversionParam: '1abc' }, { conversionParam: 'a b' }, { conversionParam: 'x'.repeat(41) }]) {
      await expect(service.create({ tenantId: 't1', url: 'https://example.com/bad', ...bad })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    }
  });

  it('stores redirect rules with the shorthand applied over them, and edits them: rules replace, shorthand changes its kind in place', async () => {
    const { service } = setup();
    const es = { url: 'https://example.com/es', conditions: [{ type: 'language', value: 'es' }] };
    const created = await service.create({
      tenantId: 't1',
      url: 'https://example.com/x',
      redirectRules: [{ url: 'https://example.com/fr', conditions: [{ type: 'country', value: 'fr' }] }, es],
      geoTargets: { DE: 'https://example.de/' },
      deviceTargets: null,
    });
    // geoTargets names the country rules there are: FR goes, DE takes its place.
    expect(created.redirectRules).toEqual([{ url: 'https://example.de/', conditions: [{ type: 'country', value: 'DE' }] }, es]);
    const id = { domain: created.domain, code: created.code };
    const moved = await service.update('t1', id, { geoTargets: { DE: 'https://example.de/2' }, deviceTargets: { ios: 'https://apps.example/' } }, null);
    expect(moved.redirectRules).toEqual([
      { url: 'https://example.de/2', conditions: [{ type: 'country', value: 'DE' }] },
      es,
      { url: 'https://apps.example/', conditions: [{ type: 'device', value: 'ios' }] },
    ]);
    expect(moved).not.toHaveProperty('geoTargets');
    const replaced = await service.update('t1', id, { redirectRules: [es] }, null);
    expect(replaced.redirectRules).toEqual([es]);
    expect((await service.update('t1', id, { redirectRules: null }, null)).redirectRules).toBeNull();
    await expect(
      service.update('t1', id, { redirectRules: [{ url: 'https://example.com/', conditions: [{ type: 'moon', value: 'full' }] }] }, null),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { field: 'redirectRules.0.conditions.0.type' },
    });
  });

  it('refuses bad options with VALIDATION_FAILED naming the field, and stores nothing', async () => {
    const { service, repo } = setup();
    const bad: Array<Record<string, unknown>> = [
      { redirectType: 307 },
      { expiresAt: '2030-01-01T00:00:00' },
      { expiresAt: 'tomorrow' },
      { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) },
      { tags: ['<script>'] },
      { maxClicks: 0 },
      { maxClicks: 1.5 },
      { password: 'abc' },
      { utm: { source: 'x', bogus: 'y' } },
      { forwardQuery: 'yes' },
      { geoTargets: { XYZ: 'https://example.com' } },
      { deviceTargets: { windows: 'https://example.com' } },
      { redirectRules: [{ url: 'https://example.com', conditions: [] }] },
      { redirectRules: [{ url: 'https://example.com', conditions: [{ type: 'country', value: 'Narnia' }] }] },
      { variants: [] },
      { variants: [{ url: 'https://example.com', weight: 0 }] },
      { clicksPerIpPerMinute: 100_000 },
      { title: 'x'.repeat(201) },
      { crawlable: 'yes' },
    ];
    for (const extra of bad) {
      await expect(service.create({ tenantId: 't1', url: 'https://example.com', ...extra })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(repo.links.size).toBe(0);
  });

  it('prepares a create without options (the fast path) exactly as the checks of each absent option would', async () => {
    const { service } = setup();
    const nulls = {
      redirectType: null,
      expiresAt: null,
      title: null,
      tags: null,
      maxClicks: null,
      password: null,
      utm: null,
      redirectRules: null,
      geoTargets: null,
      deviceTargets: null,
      variants: null,
      clicksPerIpPerMinute: null,
      crawlable: null,
    };
    const { shortDomains, shorteners } = service.targetLists();
    for (const url of ['https://example.com/a?b=c', 'https://pаypal.com/login']) {
      const checked = await service.prepare({ tenantId: 't1', url, forwardQuery: true }); // an option given: every check runs
      expect(await service.prepare({ tenantId: 't1', url })).toEqual(checked);
      expect(await service.prepare({ tenantId: 't1', url, ...nulls, forwardQuery: null })).toEqual(checked);
      // The url parsed beforehand (a batch's worker thread): the same link.
      expect(await service.prepare({ tenantId: 't1', url }, undefined, parseTarget(url, 'url', shortDomains, shorteners))).toEqual(checked);
    }
    // ... and the same refusal, after the domain's.
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: DomainError) => [e.code, e.message, e.details],
      );
    for (const url of ['https://sho.rt/x', 'https://bit.ly/x', 'ftp://example.com', 'http://10.0.0.1/']) {
      const parsed = parseTarget(url, 'url', shortDomains, shorteners);
      expect(await refusal(service.prepare({ tenantId: 't1', url }, undefined, parsed))).toEqual(await refusal(service.prepare({ tenantId: 't1', url })));
      expect(await refusal(service.prepare({ tenantId: 't1', url, domain: 'not.ours' }, undefined, parsed))).toEqual([
        ErrorCode.DOMAIN_NOT_ALLOWED,
        expect.any(String),
        expect.anything(),
      ]);
    }
    expect((await service.prepare({ tenantId: 't1', url: 'https://pаypal.com/login' })).moderation).toBe('flagged');
    // Each option alone leaves the fast path (none is dropped).
    const bare = await service.prepare({ tenantId: 't1', url: 'https://example.com/x' });
    const one = {
      redirectType: 301,
      expiresAt: '2027-06-01T00:00:00Z',
      title: 'Sale',
      tags: ['promo'],
      maxClicks: 100,
      password: 'hunter22',
      utm: { source: 'news' },
      forwardQuery: false,
      geoTargets: { DE: 'https://example.de/' },
      deviceTargets: { ios: 'https://apps.apple.com/app/x' },
      redirectRules: [{ url: 'https://example.com/es', conditions: [{ type: 'language', value: 'es' }] }],
      variants: [
        { url: 'https://example.com/a', weight: 3 },
        { url: 'https://example.com/b', weight: 1 },
      ],
      clicksPerIpPerMinute: 5,
      crawlable: true,
    };
    for (const [field, value] of Object.entries(one))
      expect(await service.prepare({ tenantId: 't1', url: 'https://example.com/x', [field]: value })).not.toEqual(bare);
  });

  it('applies the URL policy to every URL of a link, targets of options included', async () => {
    const { service } = setup();
    await expect(service.create({ tenantId: 't1', url: 'https://bit.ly/x' })).rejects.toMatchObject({
      code: 'URL_NOT_ALLOWED',
      details: { reason: 'shortener' },
    });
    await expect(service.create({ tenantId: 't1', url: 'https://example.com', geoTargets: { DE: 'http://127.0.0.1/' } })).rejects.toMatchObject({
      code: 'URL_NOT_ALLOWED',
      details: { reason: 'ip-literal' },
    });
    await expect(service.create({ tenantId: 't1', url: 'https://example.com', variants: [{ url: 'https://go.example/x', weight: 1 }] })).rejects.toMatchObject({
      code: 'URL_NOT_ALLOWED',
      details: { reason: 'redirect-loop' },
    });
    const flagged = await service.create({ tenantId: 't1', url: 'https://example.com', deviceTargets: { ios: 'https://pаypal.com/login' } });
    expect(flagged).toMatchObject({ moderation: 'flagged', moderationReason: expect.stringMatching(/^homograph/) });
  });

  it('creates on a shared domain or on one of the tenant’s own, never on another tenant’s', async () => {
    const { service } = setup();
    expect((await service.create({ tenantId: 't1', url: 'https://example.com', domain: 'GO.example' })).domain).toBe('go.example');
    expect((await service.create({ tenantId: 't1', url: 'https://example.com', domain: 'own.example' })).domain).toBe('own.example');
    await expect(service.create({ tenantId: 't2', url: 'https://example.com', domain: 'own.example' })).rejects.toMatchObject({
      code: 'DOMAIN_NOT_ALLOWED',
      details: { field: 'domain', domain: 'own.example' },
    });
  });

  it('refuses a taken alias with ALIAS_TAKEN, a reserved one with ALIAS_RESERVED, and keeps the first link', async () => {
    const { service } = setup();
    await service.create({ tenantId: 't1', url: 'https://example.com/1', alias: 'promo' });
    await expect(service.create({ tenantId: 't2', url: 'https://example.com/2', alias: 'promo' })).rejects.toMatchObject({ code: 'ALIAS_TAKEN' });
    for (const alias of ['api', 'Docs', 'health', 'metrics', 'internal', 'ADMIN']) {
      await expect(service.create({ tenantId: 't1', url: 'https://example.com', alias })).rejects.toMatchObject({ code: 'ALIAS_RESERVED' });
    }
    expect((await service.get('t1', { domain: 'sho.rt', code: 'promo' })).targetUrl).toBe('https://example.com/1');
  });

  it('skips to the next id when an alias already holds the generated code', async () => {
    const { service, codes } = setup();
    // Ids 1 and 2 are used by the alias link itself and then the next create; pre-occupy id 2's code.
    await service.create({ tenantId: 't1', url: 'https://example.com/alias', alias: codes.codeFor(2n, '', 0) });
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/generated' });
    expect(link.code).toBe(codes.codeFor(3n, '', 0));
  });

  it('edits any option with a new version, writes the new value through the cache and tells every instance', async () => {
    const { service, feed, cached } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/a', maxClicks: 5, tags: ['x'] });
    const edited = await service.update('t1', link, { url: 'https://example.com/b', maxClicks: null, tags: ['y', 'z'], status: 'disabled' }, null);
    expect(edited).toMatchObject({
      targetUrl: 'https://example.com/b',
      maxClicks: null,
      tags: ['y', 'z'],
      status: 'disabled',
      version: 2,
      code: link.code,
      domain: link.domain,
    });
    expect(cached(link.code)).toMatchObject({ targetUrl: 'https://example.com/b', status: 'disabled', version: 2 });
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: link.code, version: 2 }]);
    expect(await service.get('t1', link)).toEqual(edited);
  });

  it('marks a link crawlable on create and edit; a new crawlable link is told to every instance (its robots.txt changes), a plain one is not', async () => {
    const { service, feed, repo } = setup();
    const plain = await service.create({ tenantId: 't1', url: 'https://example.com/plain' });
    expect(plain.crawlable).toBe(false);
    const crawlable = await service.create({ tenantId: 't1', url: 'https://example.com/crawl', crawlable: true });
    expect(repo.links.get(`sho.rt/${crawlable.code}`)?.crawlable).toBe(true);
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: crawlable.code, version: 1 }]);
    const edited = await service.update('t1', plain, { crawlable: true }, null);
    expect(edited).toMatchObject({ crawlable: true, version: 2 });
    expect((await service.update('t1', plain, { crawlable: null }, null)).crawlable).toBe(false);
    expect(await repo.crawlableCodes('sho.rt', 10)).toEqual([crawlable.code]);
    // The announcement is best effort: with the channel down the link is created all the same.
    feed.down = true;
    await expect(service.create({ tenantId: 't1', url: 'https://example.com/crawl2', crawlable: true })).resolves.toMatchObject({ crawlable: true });
  });

  it('refuses a stale If-Match with PRECONDITION_FAILED and changes nothing', async () => {
    const { service, feed } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/a' });
    await service.update('t1', link, { title: 'one' }, 1);
    await expect(service.update('t1', link, { title: 'two' }, 1)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED', details: { currentVersion: 2 } });
    await expect(service.remove('t1', link, 1)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    expect((await service.get('t1', link)).title).toBe('one');
    expect(feed.published).toHaveLength(1);
  });

  it('deletes with a tombstone in the cache, and keeps the alias out of use for 90 days', async () => {
    const { service, cached, feed, now } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/a', alias: 'spring-sale' });
    await service.remove('t1', link, null);
    expect(cached('spring-sale')).toEqual({ gone: true, version: 2 });
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: 'spring-sale', version: 2 }]);
    await expect(service.get('t1', link)).rejects.toMatchObject({ code: 'LINK_NOT_FOUND' });
    now.t += 89 * DAY;
    await expect(service.create({ tenantId: 't2', url: 'https://example.com/b', alias: 'spring-sale' })).rejects.toMatchObject({ code: 'ALIAS_TAKEN' });
    now.t += 2 * DAY;
    expect((await service.create({ tenantId: 't2', url: 'https://example.com/b', alias: 'spring-sale' })).tenantId).toBe('t2');
  });

  it('tells another tenant only that a deleted or expired alias is unavailable, as a taken one; its known holder gets the date', async () => {
    const { service, now } = setup();
    const refusal = async (tenantId: string, alias: string, domain?: string) => {
      const error = await service.create({ tenantId, url: 'https://example.com/again', alias, domain }).then(
        () => null,
        (e: DomainError) => e,
      );
      return error && { code: error.code, message: error.message.replace(alias, 'ALIAS'), details: { ...error.details, alias: 'ALIAS' } };
    };
    const taken = await service.create({ tenantId: 't1', url: 'https://example.com/live', alias: 'live-one' });
    const deleted = await service.create({ tenantId: 't1', url: 'https://example.com/q3', alias: 'b-q3-layoffs' });
    await service.create({ tenantId: 't1', url: 'https://example.com/flash', alias: 'flash-sale', expiresAt: new Date(now.t + 60_000).toISOString() });
    await service.remove('t1', deleted, null);
    now.t += 61_000;
    await service.expireDue();
    const asTaken = await refusal('t2', taken.code);
    expect(asTaken).toEqual({ code: 'ALIAS_TAKEN', message: 'alias "ALIAS" is already taken on sho.rt', details: { alias: 'ALIAS', domain: 'sho.rt' } });
    expect(await refusal('t2', 'b-q3-layoffs')).toEqual(asTaken);
    expect(await refusal('t2', 'flash-sale')).toEqual(asTaken);
    // On a shared domain the quarantine does not know who deleted the code: its holder gets the same answer.
    expect(await refusal('t1', 'b-q3-layoffs')).toEqual(asTaken);
    // Its own expired link, and a deleted alias on its own domain (only its links live there), keep the detail.
    expect(await refusal('t1', 'flash-sale')).toMatchObject({ code: 'ALIAS_RETIRED', details: { availableAt: expect.any(String) } });
    const own = await service.create({ tenantId: 't1', url: 'https://example.com/own', alias: 'own-one', domain: 'own.example' });
    await service.remove('t1', own, null);
    const ownDomain = await refusal('t1', 'own-one', 'own.example');
    expect(ownDomain).toMatchObject({ code: 'ALIAS_RETIRED', details: { domain: 'own.example', availableAt: expect.any(String) } });
  });

  it('hides another tenant’s link from every operation', async () => {
    const { service } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/mine' });
    await expect(service.get('t2', link)).rejects.toMatchObject({ code: 'LINK_NOT_FOUND' });
    await expect(service.update('t2', link, { title: 'x' }, null)).rejects.toMatchObject({ code: 'LINK_NOT_FOUND' });
    await expect(service.remove('t2', link, null)).rejects.toMatchObject({ code: 'LINK_NOT_FOUND' });
    expect((await service.list('t2', { limit: 10 })).links).toEqual([]);
  });

  it('lists newest first across shards in pages with an opaque cursor, and filters', async () => {
    const { service } = setup();
    const made: Link[] = [];
    for (let i = 0; i < 25; i++)
      made.push(
        await service.create({ tenantId: 't1', url: `https://example.com/${i}`, title: i % 5 === 0 ? `Big sale ${i}` : null, tags: i % 2 ? ['odd'] : [] }),
      );
    await service.create({ tenantId: 't2', url: 'https://example.com/other-tenant' });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<LinkService['list']>> = await service.list('t1', { limit: 10, cursor });
      seen.push(...page.links.map((l) => l.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(made.map((l) => l.id).reverse());
    expect((await service.list('t1', { limit: 100, tag: 'odd' })).links).toHaveLength(12);
    expect((await service.list('t1', { limit: 100, q: 'BIG SALE' })).links.map((l) => l.title)).toEqual([
      'Big sale 20',
      'Big sale 15',
      'Big sale 10',
      'Big sale 5',
      'Big sale 0',
    ]);
    const first = await service.list('t1', { limit: 3, tag: 'odd' });
    await expect(service.list('t1', { limit: 3, cursor: first.nextCursor })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    await expect(service.list('t1', { limit: 3, cursor: 'garbage' })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
  });

  it('lists by creation time, not by id: a link created after others with lower ids comes first', async () => {
    const { service, repo, now } = setup();
    const early = await service.create({ tenantId: 't1', url: 'https://example.com/early' });
    now.t += 1000;
    // An import: ids far above the single creates' block, created before the next single create.
    for (const i of [0, 1]) {
      const { alias: _alias, ...prepared } = await service.prepare({ tenantId: 't1', url: `https://example.com/imported/${i}` });
      await repo.insert({ ...prepared, id: String(5000 + i), code: `imp${i}xyz` });
    }
    now.t += 1000;
    const late = await service.create({ tenantId: 't1', url: 'https://example.com/late' });
    expect(BigInt(late.id)).toBeLessThan(5000n);
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<LinkService['list']>> = await service.list('t1', { limit: 3, cursor });
      pages.push(page.links.map((l) => l.code));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages).toEqual([[late.code, 'imp1xyz', 'imp0xyz'], [early.code]]);
  });

  it('seals its cursors: no id inside, bound to the tenant and the filters, any change refused with INVALID_CURSOR', async () => {
    const { service } = setup();
    for (let i = 0; i < 3; i++) await service.create({ tenantId: 't1', url: `https://example.com/${i}`, tags: ['x'] });
    const page = await service.list('t1', { limit: 1 });
    const cursor = page.nextCursor!;
    const bytes = Buffer.from(cursor, 'base64url');
    const idBytes = Buffer.alloc(8);
    idBytes.writeBigUInt64BE(BigInt(page.links[0].id));
    expect(bytes.includes(idBytes)).toBe(false);
    expect(() => JSON.parse(bytes.toString('utf8'))).toThrow();
    expect((await service.list('t1', { limit: 1 })).nextCursor).not.toBe(cursor); // a fresh nonce each time: equal positions look unrelated
    expect((await service.list('t1', { limit: 1, cursor })).links).toHaveLength(1);
    await expect(service.list('t2', { limit: 1, cursor })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    await expect(service.list('t1', { limit: 1, cursor, tag: 'x' })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    for (const at of [0, 5, 20, bytes.length - 1]) {
      const tampered = Buffer.from(bytes);
      tampered[at] ^= 1;
      await expect(service.list('t1', { limit: 1, cursor: tampered.toString('base64url') })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    }
    const legacy = Buffer.from(JSON.stringify({ b: page.links[0].id, f: { q: '', tag: '', status: '', domain: '' } })).toString('base64url');
    await expect(service.list('t1', { limit: 1, cursor: legacy })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
  });

  it('marks expired links and purges them once their alias quarantine is over', async () => {
    const { service, now, cached } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/a', alias: 'flash', expiresAt: new Date(now.t + 60_000).toISOString() });
    expect(await service.expireDue()).toEqual({ expired: 0, purged: 0 });
    now.t += 61_000;
    expect(await service.expireDue()).toEqual({ expired: 1, purged: 0 });
    expect((await service.get('t1', link)).status).toBe('expired');
    expect(cached('flash')).toMatchObject({ status: 'expired', version: 2 });
    await expect(service.create({ tenantId: 't1', url: 'https://example.com/b', alias: 'flash' })).rejects.toMatchObject({ code: 'ALIAS_RETIRED' });
    now.t += 91 * DAY;
    expect(await service.expireDue()).toEqual({ expired: 0, purged: 1 });
    expect((await service.create({ tenantId: 't1', url: 'https://example.com/b', alias: 'flash' })).version).toBe(1);
  });

  it('answers an edit while the cache is down (its event waits in the outbox), and the relay delivers it once the cache is back', async () => {
    const { service, cache, relay, feed, cached, now, repo } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/a' });
    await relay.round(); // the create's event: delivered by the request, settled once read back
    cache.down = true;
    const edited = await service.update('t1', link, { url: 'https://example.com/b' }, null);
    expect(edited).toMatchObject({ targetUrl: 'https://example.com/b', version: 2 });
    expect(cached(link.code)).toBeUndefined();
    expect(feed.published).toEqual([]);
    await relay.round();
    expect(relay.pending().events).toBe(2);
    cache.down = false;
    now.t += 1000;
    await relay.round();
    expect(cached(link.code)).toMatchObject({ targetUrl: 'https://example.com/b', version: 2 });
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: link.code, version: 2 }]);
    now.t += 3000;
    await relay.round(); // read back after OUTBOX_CONFIRM_AFTER_MS: it held, so the events leave the outbox
    expect(relay.pending().events).toBe(0);
    expect(repo.outboxEvents()).toEqual([]);
  });

  it('lets an operator flag and ban any link, and an edit never lifts that', async () => {
    const { service } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/a' });
    await service.moderate(link, 'banned', 'phishing report #42');
    const edited = await service.update('t1', link, { url: 'https://example.com/b' }, null);
    expect(edited).toMatchObject({ moderation: 'banned', moderationReason: 'phishing report #42' });
    expect((await service.moderate(link, 'clear', 'ignored')).moderationReason).toBeNull();
  });

  describe('a write whose shard call failed but committed all the same (docs/design.md, "Edits reach every instance")', () => {
    const key = (code: string) => `sho.rt/${code}`;

    it('edit: the late commit reaches the caches and every instance from its outbox event, at the relay’s next round', async () => {
      const repo = new LateCommits();
      const { service, cache, feed, cached, relay } = setup(undefined, repo);
      const link = await service.create({ tenantId: 't1', url: 'https://example.com/a' });
      cache.values.set(key(link.code), link); // a redirect cached the row
      repo.timeOutNextWrite();
      await expect(service.update('t1', link, { url: 'https://example.com/b' }, null)).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE' });
      expect(feed.published).toEqual([]);
      await repo.endWrite(true);
      await relay.round();
      expect((await service.get('t1', link)).targetUrl).toBe('https://example.com/b');
      expect(cached(link.code)).toMatchObject({ targetUrl: 'https://example.com/b', version: 2 });
      expect(feed.published).toEqual([{ domain: 'sho.rt', code: link.code, version: 2 }]);
    });

    it('delete: a late commit leaves a tombstone in the cache and is told to every instance', async () => {
      const repo = new LateCommits();
      const { service, cache, feed, cached, relay } = setup(undefined, repo);
      const link = await service.create({ tenantId: 't1', url: 'https://example.com/a' });
      cache.values.set(key(link.code), link);
      repo.timeOutNextWrite();
      await expect(service.remove('t1', link, null)).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE' });
      await repo.endWrite(true);
      await relay.round();
      await expect(service.get('t1', link)).rejects.toMatchObject({ code: 'LINK_NOT_FOUND' });
      expect(cached(link.code)).toEqual({ gone: true, version: 2 });
      expect(feed.published).toEqual([{ domain: 'sho.rt', code: link.code, version: 2 }]);
    });

    it('a write the shard did not commit leaves no event, and the caches keep the stored value', async () => {
      const repo = new LateCommits();
      const { service, cache, feed, cached, relay } = setup(undefined, repo);
      const link = await service.create({ tenantId: 't1', url: 'https://example.com/a' });
      cache.values.set(key(link.code), link);
      repo.timeOutNextWrite();
      await expect(service.update('t1', link, { url: 'https://example.com/b' }, null)).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE' });
      await repo.endWrite(false);
      await relay.round();
      expect(feed.published).toEqual([]);
      expect(cached(link.code)).toEqual(link);
      expect(repo.outboxEvents().map((e) => e.kind)).toEqual(['link.created']);
    });
  });
});

/**
 * A repository whose next write answers SHARD_UNAVAILABLE as the shard guard does on its deadline,
 * and is committed, or not, only after that answer, when the test ends it.
 */
class LateCommits extends InMemoryLinkRepository {
  private late = false;
  private end: ((commits: boolean) => Promise<void>) | null = null;

  timeOutNextWrite(): void {
    this.late = true;
  }

  /** The shard ends the write that timed out: committed or not. */
  async endWrite(commits: boolean): Promise<void> {
    await this.end!(commits);
  }

  override async replace(link: Link, expectedVersion: number): Promise<boolean> {
    return this.late ? this.fail(() => super.replace(link, expectedVersion)) : super.replace(link, expectedVersion);
  }

  override async remove(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date): Promise<boolean> {
    return this.late ? this.fail(() => super.remove(id, expectedVersion, retiredUntil)) : super.remove(id, expectedVersion, retiredUntil);
  }

  private fail(write: () => Promise<boolean>): never {
    this.end = async (commits) => void (commits && (await write()));
    this.late = false;
    throw new DomainError(ErrorCode.SHARD_UNAVAILABLE, 'shard a is unavailable', { shard: 'a', retryAfterSeconds: 1 }, { cause: new Error('timeout') });
  }
}
