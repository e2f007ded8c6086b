import { randomUUID } from 'crypto';
import { DuplicateLinkError, Link, NO_OPTIONS, SequenceStore } from '@shortlink/links-domain';
import { LinkShardStore } from '@shortlink/sharding-domain';

export interface LinkStoreFixture {
  shard: LinkShardStore;
  meta: SequenceStore & { close(): Promise<void> };
  close(): Promise<void>;
}

let idCounter = BigInt(Date.now()) * 1000n;
const nextId = () => (idCounter++).toString();
const uniqueCode = () => 'c' + randomUUID().replace(/-/g, '').slice(0, 12);

/** Now, to the second (MySQL DATETIME(3) and epoch ms both keep it). */
const createdAtSecond = () => Math.floor(Date.now() / 1000) * 1000;

export function aLink(overrides: Partial<Link> = {}): Link {
  const createdAt = new Date(Math.floor(Date.now() / 1000) * 1000);
  return {
    ...NO_OPTIONS,
    id: nextId(),
    domain: 'sho.rt',
    code: uniqueCode(),
    targetUrl: 'https://example.com/landing?utm=1',
    tenantId: randomUUID(),
    createdAt,
    updatedAt: createdAt,
    expiresAt: null,
    status: 'active',
    redirectType: 302,
    version: 1,
    moderation: 'clear',
    moderationReason: null,
    moderationSource: null,
    health: null,
    ...overrides,
  };
}

/** One behaviour, every backend: run against SQLite in unit runs and MySQL in integration runs. */
export function describeLinkStoreContract(backend: string, open: () => Promise<LinkStoreFixture>) {
  describe(`link store contract: ${backend}`, () => {
    let f: LinkStoreFixture;
    beforeAll(async () => {
      f = await open();
    });
    afterAll(async () => {
      await f?.close();
    });

    it('stores a link and reads it back by domain and code with every field intact', async () => {
      const link = aLink({
        expiresAt: new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000),
        redirectType: 301,
        targetUrl: 'https://example.com/ünïcode?q=a%20b',
      });
      await f.shard.insert(link);
      expect(await f.shard.findByCode({ domain: link.domain, code: link.code })).toEqual(link);
    });

    it('returns null for an unknown code and for the right code on another domain', async () => {
      const link = aLink();
      await f.shard.insert(link);
      expect(await f.shard.findByCode({ domain: link.domain, code: uniqueCode() })).toBeNull();
      expect(await f.shard.findByCode({ domain: 'other.example', code: link.code })).toBeNull();
    });

    it('treats codes as case-sensitive', async () => {
      const lower = aLink({ code: 'case' + uniqueCode().toLowerCase() });
      const upper = aLink({ code: lower.code.toUpperCase() });
      await f.shard.insert(lower);
      await f.shard.insert(upper);
      expect((await f.shard.findByCode(lower))?.id).toBe(lower.id);
      expect((await f.shard.findByCode(upper))?.id).toBe(upper.id);
    });

    it('rejects a second link with the same domain and code and keeps the first one', async () => {
      const first = aLink();
      await f.shard.insert(first);
      await expect(f.shard.insert(aLink({ code: first.code }))).rejects.toBeInstanceOf(DuplicateLinkError);
      expect(await f.shard.findByCode(first)).toEqual(first);
    });

    it('rejects a second link with the same id under another code and keeps the first one', async () => {
      const first = aLink();
      await f.shard.insert(first);
      const sameId = aLink({ id: first.id });
      await expect(f.shard.insert(sameId)).rejects.toBeInstanceOf(DuplicateLinkError);
      expect(await f.shard.findByCode(first)).toEqual(first);
      expect(await f.shard.findByCode(sameId)).toBeNull();
    });

    it('keeps values, not the caller’s objects: a date changed after an insert, a replace or a read changes nothing stored', async () => {
      const link = aLink({ expiresAt: new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000) });
      const stored = structuredClone(link);
      await f.shard.insert(link);
      link.createdAt.setTime(0);
      link.expiresAt!.setTime(0);
      expect(await f.shard.findByCode(stored)).toEqual(stored);
      (await f.shard.findByCode(stored))!.updatedAt.setTime(0);
      expect(await f.shard.findByCode(stored)).toEqual(stored);

      const next = { ...stored, targetUrl: 'https://example.com/next', version: 2, updatedAt: new Date(stored.updatedAt.getTime() + 1000) };
      const replaced = structuredClone(next);
      expect(await f.shard.replace(next, 1)).toBe(true);
      next.updatedAt.setTime(0);
      (await f.shard.findMany([stored]))[0].updatedAt.setTime(0);
      (await f.shard.listByTenant({ tenantId: stored.tenantId, after: null, limit: 1 }))[0].expiresAt!.setTime(0);
      expect(await f.shard.findByCode(stored)).toEqual(replaced);
    });

    it('allows the same code on two domains', async () => {
      const a = aLink({ domain: 'a.example' });
      const b = aLink({ domain: 'b.example', code: a.code });
      await f.shard.insert(a);
      await f.shard.insert(b);
      expect((await f.shard.findByCode(b))?.id).toBe(b.id);
    });

    it('stores concurrent single inserts each on its own: a duplicate among them fails alone (docs/design.md, "Group commit")', async () => {
      const taken = aLink();
      await f.shard.insert(taken);
      const fresh = Array.from({ length: 12 }, () => aLink());
      const duplicate = aLink({ domain: taken.domain, code: taken.code });
      const outcomes = await Promise.allSettled([...fresh.slice(0, 6), duplicate, ...fresh.slice(6)].map((l) => f.shard.insert(l)));
      expect(outcomes.map((o) => o.status)).toEqual([...Array(6).fill('fulfilled'), 'rejected', ...Array(6).fill('fulfilled')]);
      expect((outcomes[6] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateLinkError);
      for (const link of fresh) expect(await f.shard.findByCode({ domain: link.domain, code: link.code })).toEqual(link);
      expect((await f.shard.findByCode({ domain: taken.domain, code: taken.code }))?.id).toBe(taken.id);
    });

    it('inserts a batch atomically: a duplicate inside rejects the whole batch', async () => {
      const batch = [aLink(), aLink(), aLink()];
      await f.shard.insertMany(batch);
      for (const l of batch) expect(await f.shard.findByCode(l)).toEqual(l);
      const existing = batch[0];
      const fresh = aLink();
      await expect(f.shard.insertMany([fresh, aLink({ code: existing.code })])).rejects.toBeInstanceOf(DuplicateLinkError);
      expect(await f.shard.findByCode(fresh)).toBeNull();
    });

    it('lists identifiers in id order, page by page', async () => {
      const links = [aLink(), aLink(), aLink()];
      await f.shard.insertMany(links);
      const page = await f.shard.listIdentifiers((BigInt(links[0].id) - 1n).toString(), 2);
      expect(page.map((p) => p.code)).toEqual([links[0].code, links[1].code]);
    });

    it('round-trips every option, the version and the moderation state', async () => {
      const link = aLink({
        title: 'Spring – Früh',
        tags: ['promo', 'q1 2027'],
        maxClicks: 100,
        passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$abc$def',
        utm: { source: 'news', campaign: 'spring' },
        forwardQuery: false,
        trackConversions: true,
        conversionParam: 'ref_id',
        tagConversionParam: 'cid',
        redirectRules: [
          { url: 'https://example.de/', conditions: [{ type: 'country', value: 'DE' }] },
          {
            url: 'https://example.com/es-mail',
            conditions: [
              { type: 'language', value: 'es-MX' },
              { type: 'query-param', name: 'ref', value: 'mail ü' },
              { type: 'query-param', name: 'promo' },
              { type: 'ip-address', value: '10.0.0.0/8' },
              { type: 'after-date', value: '2027-01-01T00:00:00.000Z' },
              { type: 'browser', value: 'firefox' },
              { type: 'os', value: 'linux' },
              { type: 'region', value: 'Baden-Württemberg' },
              { type: 'city', value: 'Zürich' },
            ],
          },
          { url: 'https://apps.apple.com/x', conditions: [{ type: 'device', value: 'ios' }] },
        ],
        variants: [
          { url: 'https://example.com/a', weight: 3 },
          { url: 'https://example.com/b', weight: 1 },
        ],
        clicksPerIpPerMinute: 5,
        crawlable: true,
        passwordRememberHours: 2,
        social: { title: 'Spring "sale"', description: null, image: 'https://cdn.example/s.png' },
        appTargets: { ios: 'myapp://product/42?ref=%22x%22', android: 'https://example.com/app/42' },
        version: 7,
        moderation: 'flagged',
        moderationReason: 'homograph: x',
        moderationSource: 'feed:urlhaus',
        health: {
          state: 'broken',
          since: new Date(createdAtSecond() - 86_400_000),
          brokenTargets: ['https://example.de/'],
          lastStatus: 404,
          lastError: null,
          checkedAt: new Date(createdAtSecond()),
        },
        status: 'disabled',
      });
      await f.shard.insert(link);
      expect(await f.shard.findByCode(link)).toEqual(link);
    });

    it('keeps an edit of app targets, and their removal (docs/design.md, "Link options")', async () => {
      const link = aLink({ appTargets: { android: 'myapp://a' } });
      await f.shard.insert(link);
      const next = { ...link, appTargets: { ios: 'https://example.com/app/1' }, version: 2 };
      expect(await f.shard.replace(next, 1)).toBe(true);
      expect((await f.shard.findByCode(link))?.appTargets).toEqual({ ios: 'https://example.com/app/1' });
      expect(await f.shard.replace({ ...next, appTargets: null, version: 3 }, 2)).toBe(true);
      expect((await f.shard.findByCode(link))?.appTargets).toBeNull();
    });

    it('replaces a link only while its version is the expected one, tags included', async () => {
      const link = aLink({ tags: ['a'] });
      await f.shard.insert(link);
      const next = { ...link, targetUrl: 'https://example.com/next', tags: ['b', 'c'], version: 2, updatedAt: new Date(link.updatedAt.getTime() + 1000) };
      expect(await f.shard.replace(next, 1)).toBe(true);
      expect(await f.shard.replace({ ...next, targetUrl: 'https://example.com/lost', version: 3 }, 1)).toBe(false);
      expect(await f.shard.findByCode(link)).toEqual(next);
      const listed = async (tag: string) => (await f.shard.listByTenant({ tenantId: link.tenantId, after: null, limit: 10, tag })).map((l) => l.id);
      expect(await listed('a')).toEqual([]);
      expect(await listed('c')).toEqual([link.id]);
      expect(await f.shard.replace(aLink(), 1)).toBe(false); // gone (never stored)
    });

    it('records health without a new version, only over the version it read, and lists a tenant’s links by health (docs/design.md, "Trust and safety")', async () => {
      const tenantId = randomUUID();
      const [ok, broken, unchecked] = [aLink({ tenantId }), aLink({ tenantId }), aLink({ tenantId })];
      await f.shard.insertMany([ok, broken, unchecked]);
      const at = new Date(createdAtSecond());
      const healthy = { state: 'ok' as const, since: at, brokenTargets: [], lastStatus: 200, lastError: null, checkedAt: at };
      expect(await f.shard.recordHealth({ ...ok, health: healthy }, 1)).toBe(true);
      expect(await f.shard.findByCode(ok)).toEqual({ ...ok, health: healthy });
      // A newer check of the same state: no version, only the health columns change.
      const later = { ...healthy, checkedAt: new Date(at.getTime() + 60_000), lastStatus: 204 };
      expect(await f.shard.recordHealth({ ...ok, targetUrl: 'https://example.com/not-written', health: later }, 1)).toBe(true);
      expect(await f.shard.findByCode(ok)).toEqual({ ...ok, health: later });
      // Over another version, or another link under the code, nothing is written.
      expect(await f.shard.recordHealth({ ...ok, health: { ...later, lastStatus: 500 } }, 2)).toBe(false);
      expect(await f.shard.recordHealth({ ...ok, id: nextId(), health: { ...later, lastStatus: 500 } }, 1)).toBe(false);
      expect((await f.shard.findByCode(ok))?.health?.lastStatus).toBe(204);
      // A broken state through a versioned replace.
      const down = { state: 'broken' as const, since: at, brokenTargets: [broken.targetUrl], lastStatus: null, lastError: 'timeout', checkedAt: at };
      expect(await f.shard.replace({ ...broken, health: down, version: 2 }, 1)).toBe(true);
      const listed = async (health: 'ok' | 'broken' | 'unchecked') =>
        (await f.shard.listByTenant({ tenantId, after: null, limit: 10, health })).map((l) => l.code).sort();
      expect(await listed('ok')).toEqual([ok.code]);
      expect(await listed('broken')).toEqual([broken.code]);
      expect(await listed('unchecked')).toEqual([unchecked.code]);
      expect((await f.shard.findByCode(broken))?.health).toEqual(down);
    });

    it('pages every link of the shard in id order, each link whole', async () => {
      const links = [aLink(), aLink({ tags: ['x'] }), aLink()];
      await f.shard.insertMany(links);
      const seen: Link[] = [];
      for (let page = await f.shard.listLinks(null, 2), after: string | null = null; page.length; page = await f.shard.listLinks(after, 2)) {
        expect(page.length).toBeLessThanOrEqual(2);
        seen.push(...page);
        after = page[page.length - 1].id;
      }
      const ids = seen.map((l) => BigInt(l.id));
      expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      for (const link of links) expect(seen.find((l) => l.id === link.id)).toEqual(link);
    });

    it('lists the crawlable codes of a domain in code order, bounded, and follows an edit that changes the flag', async () => {
      const domain = `crawl-${uniqueCode()}.example`;
      const [b, a, plain, elsewhere] = [
        aLink({ domain, code: 'b-' + uniqueCode(), crawlable: true }),
        aLink({ domain, code: 'a-' + uniqueCode(), crawlable: true }),
        aLink({ domain, code: 'p-' + uniqueCode() }),
        aLink({ domain: `other-${domain}`, code: 'c-' + uniqueCode(), crawlable: true }),
      ];
      await f.shard.insertMany([b, a, plain, elsewhere]);
      expect(await f.shard.crawlableCodes(domain, 10)).toEqual([a.code, b.code]);
      expect(await f.shard.crawlableCodes(domain, 1)).toEqual([a.code]);
      expect(await f.shard.replace({ ...a, crawlable: false, version: 2 }, 1)).toBe(true);
      expect(await f.shard.replace({ ...plain, crawlable: true, version: 2 }, 1)).toBe(true);
      expect(await f.shard.crawlableCodes(domain, 10)).toEqual([b.code, plain.code]);
      expect((await f.shard.findByCode(a))?.crawlable).toBe(false);
    });

    it("lists a tenant's tags once each, in order, bounded, and follows an edit and a delete", async () => {
      const tenantId = randomUUID();
      const [one, two] = [aLink({ tenantId, tags: ['spring', 'news'] }), aLink({ tenantId, tags: ['news', 'autumn'] })];
      await f.shard.insertMany([one, two, aLink({ tags: ['someone-else'] })]);
      expect(await f.shard.tagsOf(tenantId, 10)).toEqual(['autumn', 'news', 'spring']);
      expect(await f.shard.tagsOf(tenantId, 2)).toEqual(['autumn', 'news']);
      expect(await f.shard.replace({ ...two, tags: ['winter'], version: 2 }, 1)).toBe(true);
      expect(await f.shard.remove(one, 1, new Date(Date.now() + 60_000))).toBe(true);
      expect(await f.shard.tagsOf(tenantId, 10)).toEqual(['winter']);
      expect(await f.shard.tagsOf(randomUUID(), 10)).toEqual([]);
    });

    it('counts redirects per link: concurrent additions all land, an edit keeps the count, another id or a gone link is null', async () => {
      const link = aLink();
      await f.shard.insert(link);
      expect(await f.shard.clickCount(link, link.id)).toBe(0);
      const totals = await Promise.all(Array.from({ length: 10 }, (_, i) => f.shard.addClicks(link, link.id, i + 1)));
      expect(Math.max(...(totals as number[]))).toBe(55);
      expect(await f.shard.replace({ ...link, targetUrl: 'https://example.com/edited', version: 2 }, 1)).toBe(true);
      expect(await f.shard.clickCount(link, link.id)).toBe(55);
      expect(await f.shard.addClicks(link, nextId(), 1)).toBeNull(); // same code, another (e.g. recreated) link
      expect(await f.shard.clickCount(link, nextId())).toBeNull();
      expect(await f.shard.remove(link, 2, new Date(Date.now() + 1000))).toBe(true);
      expect(await f.shard.addClicks(link, link.id, 1)).toBeNull();
      expect(await f.shard.clickCount(link, link.id)).toBeNull();
    });

    it('removes a link at the expected version and keeps its code retired until the given time', async () => {
      const link = aLink({ tags: ['gone'] });
      await f.shard.insert(link);
      const until = new Date(Date.now() + 90 * 86_400_000);
      expect(await f.shard.remove(link, 2, until)).toBe(false);
      expect(await f.shard.remove(link, 1, until)).toBe(true);
      expect(await f.shard.findByCode(link)).toBeNull();
      expect((await f.shard.retiredUntil(link, new Date()))?.getTime()).toBe(until.getTime());
      expect(await f.shard.retiredUntil(link, new Date(until.getTime() + 1))).toBeNull();
      expect(await f.shard.listByTenant({ tenantId: link.tenantId, after: null, limit: 10, tag: 'gone' })).toEqual([]);
    });

    it("lists a tenant's links newest first, before a cursor, by status, domain, tag and search text", async () => {
      const tenantId = randomUUID();
      const links = Array.from({ length: 6 }, (_, i) =>
        aLink({
          tenantId,
          title: i === 2 ? 'Summer 100% Sale' : null,
          tags: i % 2 ? ['odd'] : [],
          status: i === 5 ? 'disabled' : 'active',
          domain: i === 4 ? 'b.example' : 'sho.rt',
        }),
      );
      await f.shard.insertMany(links);
      await f.shard.insert(aLink({ title: 'Summer 100% Sale' })); // another tenant
      const ids = async (q: Partial<Parameters<typeof f.shard.listByTenant>[0]>) =>
        (await f.shard.listByTenant({ tenantId, after: null, limit: 10, ...q })).map((l) => l.id);
      const newestFirst = links.map((l) => l.id).reverse();
      expect(await ids({})).toEqual(newestFirst);
      expect(await ids({ limit: 2 })).toEqual(newestFirst.slice(0, 2));
      expect(await ids({ after: links[3] })).toEqual([links[2].id, links[1].id, links[0].id]);
      expect(await ids({ status: 'disabled' })).toEqual([links[5].id]);
      expect(await ids({ domain: 'b.example' })).toEqual([links[4].id]);
      expect(await ids({ tag: 'odd' })).toEqual([links[5].id, links[3].id, links[1].id]);
      expect(await ids({ search: 'summer 100%' })).toEqual([links[2].id]);
      expect(await ids({ search: '100%_' })).toEqual([]); // % and _ are taken literally
      expect(await ids({ search: links[1].code })).toEqual([links[1].id]);
      expect(await ids({ search: 'example.com/landing' })).toHaveLength(6);
    });

    it('lists newest first by creation time, then id, whatever the id order; pages go on after a (time, id) position', async () => {
      const tenantId = randomUUID();
      const t = Math.floor(Date.now() / 1000) * 1000;
      // Ids as a batch and single creates hand them out: an import's higher ids, created earlier.
      const importedId = (i: number) => (BigInt(nextId()) + 1_000_000n + BigInt(i)).toString();
      const imported = [0, 1, 2].map((i) => aLink({ tenantId, id: importedId(i), createdAt: new Date(t - 60_000), status: i === 1 ? 'disabled' : 'active' }));
      const single = [1, 2].map((s) => aLink({ tenantId, createdAt: new Date(t - 60_000 + s * 1000 + 7) }));
      const older = aLink({ tenantId, createdAt: new Date(t - 3_600_000), tags: ['old'] });
      await f.shard.insertMany([...imported, older]);
      for (const link of single) await f.shard.insert(link);
      const order = [single[1], single[0], imported[2], imported[1], imported[0], older].map((l) => l.id);
      const page = (after: Link | null, limit: number, q: object = {}) => f.shard.listByTenant({ tenantId, after, limit, ...q });
      expect((await page(null, 10)).map((l) => l.id)).toEqual(order);
      // Page by page: each page goes on after the last row of the one before, within one millisecond too.
      const seen: string[] = [];
      let last: Link | null = null;
      for (let i = 0; i < 4; i++) {
        const rows: Link[] = await page(last, 2);
        seen.push(...rows.map((l) => l.id));
        last = rows[rows.length - 1] ?? last;
      }
      expect(seen).toEqual(order);
      expect((await page(imported[2], 10, { status: 'active' })).map((l) => l.id)).toEqual([imported[0].id, older.id]);
      expect((await page(single[0], 10, { tag: 'old' })).map((l) => l.id)).toEqual([older.id]);
      expect((await page(null, 10, { search: single[0].code })).map((l) => l.id)).toEqual([single[0].id]);
    });

    it('marks due links expired with a new version, and purges long-expired ones', async () => {
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      const tenantId = randomUUID();
      const due = aLink({ tenantId, expiresAt: new Date(now.getTime() - 1000) });
      const later = aLink({ tenantId, expiresAt: new Date(now.getTime() + 3_600_000) });
      const old = aLink({ tenantId, expiresAt: new Date(now.getTime() - 100 * 86_400_000), status: 'expired' });
      await f.shard.insertMany([due, later, old]);
      const expired = await f.shard.expireDue(now, 1000);
      expect(expired.filter((l) => l.tenantId === tenantId).map((l) => [l.code, l.status, l.version])).toEqual([[due.code, 'expired', 2]]);
      expect((await f.shard.findByCode(due))?.status).toBe('expired');
      expect((await f.shard.findByCode(later))?.status).toBe('active');
      expect(await f.shard.purgeExpired(new Date(now.getTime() - 90 * 86_400_000), 1000)).toBeGreaterThanOrEqual(1);
      expect(await f.shard.findByCode(old)).toBeNull();
      expect(await f.shard.findByCode(due)).not.toBeNull();
    });

    it('finds many links by identifier at once (case-sensitive codes, per domain), and which of them are retired', async () => {
      const a = aLink();
      const b = aLink({ domain: 'own.example' });
      const upper = aLink({ code: a.code.toUpperCase() });
      await f.shard.insertMany([a, b, upper]);
      const many = Array.from({ length: 1200 }, () => ({ domain: 'sho.rt', code: uniqueCode() })); // more than one statement's worth
      const found = await f.shard.findMany([
        ...many,
        { domain: a.domain, code: a.code },
        { domain: 'sho.rt', code: b.code },
        { domain: b.domain, code: b.code },
      ]);
      expect(found.map((l) => l.id).sort()).toEqual([a.id, b.id].sort());
      expect(found.find((l) => l.id === b.id)).toEqual(b);
      expect(await f.shard.findMany([])).toEqual([]);
      expect(await f.shard.findMany([a, { domain: a.domain, code: a.code }])).toEqual([a]); // asked twice, found once

      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      const until = new Date(now.getTime() + 86_400_000);
      expect(await f.shard.remove(a, 1, until)).toBe(true);
      expect(await f.shard.remove(b, 1, new Date(now.getTime() - 1000))).toBe(true); // its quarantine is over
      const retired = await f.shard.retiredAmong([a, b, upper, ...many.slice(0, 600)], now);
      expect(retired).toEqual([{ domain: a.domain, code: a.code, retiredUntil: until }]);
      expect(await f.shard.retiredAmong([a, { domain: a.domain, code: a.code }], now)).toEqual(retired);
    });

    it('hands out disjoint id blocks to concurrent allocations', async () => {
      const sequence = 'contract-' + randomUUID().slice(0, 8);
      const blocks = await Promise.all(Array.from({ length: 20 }, () => f.meta.allocateBlock(sequence, 1000)));
      const starts = blocks.map((b) => b.start).sort((a, b) => (a < b ? -1 : 1));
      blocks.forEach((b) => expect(b.end - b.start).toBe(1000n));
      for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBe(1000n);
      expect(starts[0]).toBe(1n);
    });
  });
}
