import { randomUUID } from 'crypto';
import type { AbuseReport, IndexedLink, LinkRef, SafetyStore } from '@shortlink/safety-domain';
import { urlHashOf } from '@shortlink/safety-domain';

/** Times to the millisecond, as both backends keep them. */
const T0 = Date.UTC(2026, 11, 7, 10, 0, 0, 123);
const at = (offsetMs: number) => new Date(T0 + offsetMs);

/** Link ids unique per run (the real-stack database is shared by every run), increasing. */
let nextLinkId = BigInt(Date.now()) * 1000n;
const linkId = () => (nextLinkId++).toString();
/** A host no other run uses. */
const host = (label: string) => `${label}.r${randomUUID().slice(0, 8)}.example`;

function aLink(targets: string[], overrides: Partial<LinkRef> = {}): IndexedLink {
  return {
    linkId: linkId(),
    domain: 'sho.rt',
    code: `c${randomUUID().slice(0, 6)}`,
    tenantId: randomUUID(),
    targets: targets.map((url) => ({ url, host: new URL(url).hostname })),
    ...overrides,
  };
}

function aReport(link: LinkRef, overrides: Partial<AbuseReport> = {}): AbuseReport {
  const ref = { linkId: link.linkId, domain: link.domain, code: link.code, tenantId: link.tenantId };
  return {
    ...ref,
    id: randomUUID(),
    reason: 'phishing',
    details: 'asks for my “password” ✓',
    reporter: randomUUID().replace(/-/g, ''),
    createdAt: at(0),
    ...overrides,
  };
}

export interface SafetyStoreFixture {
  readonly safety: SafetyStore;
  close(): Promise<void>;
}

/** One behaviour, every backend: SQLite and the in-memory double in unit runs, MariaDB in integration runs (docs/design.md, "Trust and safety"). */
export function describeSafetyStoreContract(backend: string, open: () => Promise<SafetyStoreFixture>) {
  describe(`safety store contract: ${backend}`, () => {
    let f: SafetyStoreFixture;
    beforeAll(async () => {
      f = await open();
    });
    afterAll(async () => {
      await f?.close();
    });

    it('indexes each link’s targets exactly as given, by host (with subdomains) and by URL; a target is due at once, once', async () => {
      const evil = host('evil');
      const shop = host('shop');
      const a = aLink([`https://cdn.${evil}/x`, `https://${shop}/a`]);
      const b = aLink([`https://${shop}/a`]);
      const c = aLink([`https://${evil}/`, `https://my_${shop}/`]);
      await f.safety.index([a, b, c], at(0));
      const codes = async (hosts: { covering: string[]; exact: string[] }, after: string | null = null, limit = 10) =>
        (await f.safety.linksOnHosts(hosts, after, limit)).map((r) => r.linkId);
      expect(await codes({ covering: [evil], exact: [] })).toEqual([a.linkId, c.linkId]);
      expect(await codes({ covering: [], exact: [evil] })).toEqual([c.linkId]);
      expect(await codes({ covering: [], exact: [`cdn.${evil}`, shop] })).toEqual([a.linkId, b.linkId]);
      expect(await codes({ covering: [evil, shop], exact: [] }, a.linkId, 1)).toEqual([b.linkId]);
      // `_` and `%` in a host are themselves, not patterns.
      expect(await codes({ covering: [`my%${shop.slice(3)}`], exact: [] })).toEqual([]);
      expect(await f.safety.linksOnHosts({ covering: [], exact: [] }, null, 10)).toEqual([]);
      const shared = urlHashOf(`https://${shop}/a`);
      expect((await f.safety.linksOfTarget(shared, null, 10)).map((r) => r.linkId)).toEqual([a.linkId, b.linkId]);
      expect(await f.safety.linksOfTarget(shared, a.linkId, 10)).toEqual([{ linkId: b.linkId, domain: 'sho.rt', code: b.code, tenantId: b.tenantId }]);
      const due = (await f.safety.dueTargets(at(0), 100_000)).filter((t) => t.url.includes(evil) || t.url.includes(shop));
      expect(due.map((t) => t.url).sort()).toEqual([`https://${evil}/`, `https://${shop}/a`, `https://cdn.${evil}/x`, `https://my_${shop}/`].sort());
      expect(due.find((t) => t.urlHash === shared)).toEqual({
        urlHash: shared,
        url: `https://${shop}/a`,
        host: shop,
        state: 'unchecked',
        since: null,
        lastStatus: null,
        lastError: null,
        checkedAt: null,
        failures: 0,
        nextCheckAt: at(0),
      });
      // An edit: the link's targets become the new set; a delete: its rows go.
      await f.safety.index([{ ...a, targets: [{ url: `https://${shop}/a`, host: shop }] }], at(1000));
      expect(await codes({ covering: [evil], exact: [] })).toEqual([c.linkId]);
      expect((await f.safety.targetsOfLinks([a.linkId])).map((t) => t.target.url)).toEqual([`https://${shop}/a`]);
      await f.safety.unindex([b.linkId, c.linkId]);
      expect((await f.safety.linksOfTarget(shared, null, 10)).map((r) => r.linkId)).toEqual([a.linkId]);
    });

    it('records checks and postpones; due targets come most overdue first; unused targets are dropped', async () => {
      const h = host('checks');
      const link = aLink([`https://${h}/1`, `https://${h}/2`]);
      await f.safety.index([link], at(-5000));
      const [one, two] = [urlHashOf(`https://${h}/1`), urlHashOf(`https://${h}/2`)];
      await f.safety.recordCheck(one, {
        state: 'broken',
        since: at(10),
        lastStatus: 404,
        lastError: null,
        checkedAt: at(10),
        failures: 2,
        nextCheckAt: at(-10_000),
      });
      await f.safety.postpone([two], at(60_000));
      const mine = (list: { urlHash: string }[]) => list.filter((t) => t.urlHash === one || t.urlHash === two);
      expect(mine(await f.safety.dueTargets(at(0), 100_000))).toEqual([
        {
          urlHash: one,
          url: `https://${h}/1`,
          host: h,
          state: 'broken',
          since: at(10),
          lastStatus: 404,
          lastError: null,
          checkedAt: at(10),
          failures: 2,
          nextCheckAt: at(-10_000),
        },
      ]);
      expect(mine(await f.safety.dueTargets(at(60_000), 100_000)).map((t) => t.urlHash)).toEqual([one, two]);
      const targets = await f.safety.targetsOfLinks([link.linkId]);
      expect(targets.map((t) => [t.linkId, t.target.state]).sort()).toEqual([
        [link.linkId, 'broken'],
        [link.linkId, 'unchecked'],
      ]);
      await f.safety.unindex([link.linkId]);
      let dropped = 0;
      for (let n = await f.safety.dropUnused(1000); n > 0; n = await f.safety.dropUnused(1000)) dropped += n;
      expect(dropped).toBeGreaterThanOrEqual(2);
      expect(mine(await f.safety.dueTargets(at(1e9), 100_000))).toEqual([]);
      // Indexed again, the target comes back (a row dropped as unused meanwhile is made again).
      await f.safety.index([link], at(0));
      expect(mine(await f.safety.dueTargets(at(0), 100_000))).toHaveLength(2);
    });

    it('takes one report per visitor and link, lists a link’s newest first, relays each once', async () => {
      const link = aLink([`https://${host('r')}/`]);
      const first = aReport(link, { createdAt: at(0) });
      const second = aReport(link, { createdAt: at(1000), reason: 'malware', details: null });
      expect(await f.safety.addReport(first)).toBe(true);
      expect(await f.safety.addReport(second)).toBe(true);
      expect(await f.safety.addReport({ ...second, id: randomUUID(), reason: 'spam' })).toBe(false);
      expect(await f.safety.reportsOf(link.linkId, 10)).toEqual([second, first]);
      expect(await f.safety.reportsOf(link.linkId, 1)).toEqual([second]);
      const pending = (await f.safety.unrelayedReports(100_000)).filter((r) => r.linkId === link.linkId);
      expect(pending.map((r) => r.id)).toEqual([first.id, second.id]);
      await f.safety.markRelayed([first.id, second.id]);
      expect((await f.safety.unrelayedReports(100_000)).filter((r) => r.linkId === link.linkId)).toEqual([]);
    });

    it('keeps the operators’ queue: reports and hits open an item (again), a resolution closes it; pages newest first', async () => {
      const [a, b, c] = [aLink([]), aLink([]), aLink([])];
      await f.safety.noteReports(a, 2, at(100));
      await f.safety.noteReports(a, 1, at(200));
      await f.safety.noteHit(b, { state: 'banned', reason: 'URLhaus malware_download: https://x.example/', source: 'feed:urlhaus' }, at(300));
      await f.safety.noteReports(c, 1, at(300));
      expect(await f.safety.queueItem(a.linkId)).toEqual({
        linkId: a.linkId,
        domain: 'sho.rt',
        code: a.code,
        tenantId: a.tenantId,
        state: 'open',
        reports: 3,
        lastReportAt: at(200),
        hit: null,
        openedAt: at(100),
        updatedAt: at(200),
        resolution: null,
      });
      expect((await f.safety.queueItem(b.linkId))?.hit).toEqual({
        state: 'banned',
        reason: 'URLhaus malware_download: https://x.example/',
        source: 'feed:urlhaus',
        at: at(300),
      });
      const mine = (items: { linkId: string }[]) => items.map((i) => i.linkId).filter((id) => [a, b, c].some((l) => l.linkId === id));
      const open = await f.safety.listQueue('open', null, 100_000);
      expect(mine(open)).toEqual([c.linkId, b.linkId, a.linkId]);
      const after = open.find((i) => i.linkId === b.linkId)!;
      expect(mine(await f.safety.listQueue('open', { updatedAt: after.updatedAt, linkId: after.linkId }, 100_000))).toEqual([a.linkId]);
      await f.safety.resolve(a, { action: 'ban', reason: 'phishing kit', by: 'operator', at: at(400) });
      expect(await f.safety.queueItem(a.linkId)).toMatchObject({
        state: 'resolved',
        resolution: { action: 'ban', reason: 'phishing kit', by: 'operator', at: at(400) },
      });
      expect(mine(await f.safety.listQueue('resolved', null, 100_000))).toEqual([a.linkId]);
      // A new report opens it again, counting from there.
      await f.safety.noteReports(a, 1, at(500));
      expect(await f.safety.queueItem(a.linkId)).toMatchObject({ state: 'open', reports: 1, resolution: null, openedAt: at(500) });
      // A link acted on without an item gets one, resolved.
      const d = aLink([]);
      await f.safety.resolve(d, { action: 'suspend-tenant', reason: null, by: 'operator', at: at(600) });
      expect(await f.safety.queueItem(d.linkId)).toMatchObject({ state: 'resolved', reports: 0, resolution: { action: 'suspend-tenant' } });
    });

    it('keeps a tenant’s broken-link settings by version, and lists those that are not the default', async () => {
      const tenant = randomUUID();
      expect(await f.safety.brokenLinkSettings(tenant)).toBeNull();
      const v1 = { mode: 'url' as const, url: 'https://help.example/moved', version: 1, updatedAt: at(0) };
      expect(await f.safety.saveBrokenLinkSettings(tenant, v1, 0)).toBe(true);
      expect(await f.safety.saveBrokenLinkSettings(tenant, { ...v1, version: 1 }, 0)).toBe(false);
      expect(await f.safety.brokenLinkSettings(tenant)).toEqual(v1);
      expect((await f.safety.allBrokenLinkSettings()).find((s) => s.tenantId === tenant)?.settings).toEqual(v1);
      const v2 = { mode: 'target' as const, url: null, version: 2, updatedAt: at(1000) };
      expect(await f.safety.saveBrokenLinkSettings(tenant, v2, 0)).toBe(false);
      expect(await f.safety.saveBrokenLinkSettings(tenant, v2, 1)).toBe(true);
      expect((await f.safety.allBrokenLinkSettings()).find((s) => s.tenantId === tenant)).toBeUndefined();
    });

    it('remembers a feed’s digest by its name (a URL of any length), and gives a lease to one owner at a time', async () => {
      const name = `urlhaus:https://feeds.example/${'x'.repeat(3000)}/${randomUUID()}`;
      expect(await f.safety.feedDigest(name)).toBeNull();
      await f.safety.saveFeedDigest(name, 'a'.repeat(64), 10, at(0));
      await f.safety.saveFeedDigest(name, 'b'.repeat(64), 11, at(1));
      expect(await f.safety.feedDigest(name)).toBe('b'.repeat(64));
      const lease = `sweep:${randomUUID()}`;
      expect(await f.safety.claimLease(lease, 'one', 60_000)).toBe(true);
      expect(await f.safety.claimLease(lease, 'two', 60_000)).toBe(false);
      expect(await f.safety.claimLease(lease, 'one', 60_000)).toBe(true); // renewed
      await f.safety.releaseLease(lease, 'two'); // not the holder: nothing
      expect(await f.safety.claimLease(lease, 'two', 60_000)).toBe(false);
      await f.safety.releaseLease(lease, 'one');
      // A lease past its time is free: one taken already lapsed (a negative time to live) is taken over at once.
      expect(await f.safety.claimLease(lease, 'two', -1000)).toBe(true);
      expect(await f.safety.claimLease(lease, 'one', 60_000)).toBe(true);
      expect(await f.safety.claimLease(lease, 'two', 60_000)).toBe(false);
    });
  });
}
