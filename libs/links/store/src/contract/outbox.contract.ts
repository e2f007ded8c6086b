import { randomUUID } from 'crypto';
import { DuplicateLinkError, OutboxEvent, OutboxStamp } from '@shortlink/links-domain';
import { LinkShardStore } from '@shortlink/sharding-domain';
import { aLink } from './link-store.contract';

export interface OutboxFixture {
  /** A shard store whose writes stamp their events `stamp`. */
  open(stamp: OutboxStamp): Promise<LinkShardStore>;
  close(): Promise<void>;
}

const LEASE = 60_000;
const shape = (e: OutboxEvent) => [e.kind, e.code, e.version];

/**
 * The outbox of a shard (docs/design.md, "Edits reach every instance"), one behaviour on every
 * backend: each change of a link writes its event in the change's transaction, and relays lease,
 * take over, renew and settle events by owner.
 */
export function describeOutboxContract(backend: string, fixture: () => Promise<OutboxFixture>) {
  describe(`link event outbox contract: ${backend}`, () => {
    let f: OutboxFixture;
    beforeAll(async () => {
      f = await fixture();
    });
    afterAll(async () => {
      await f?.close();
    });
    /** A store whose events are leased to an owner of this test only, for a minute. */
    const owned = async () => {
      const owner = `test-${randomUUID().slice(0, 8)}`;
      return { owner, shard: await f.open({ owner, leaseMs: LEASE }) };
    };

    it('writes the event of every change with it, in one transaction: a refused or failed write leaves none', async () => {
      const { owner, shard } = await owned();
      const before = Date.now();
      const tenantId = randomUUID();
      const link = aLink({ tenantId });
      await shard.insert(link);
      const [created] = await shard.leased(owner, null, 10);
      expect(created).toMatchObject({
        kind: 'link.created',
        linkId: link.id,
        tenantId,
        domain: link.domain,
        code: link.code,
        version: 1,
        shard: shard.shardName,
      });
      expect(created.occurredAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(created.occurredAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);

      const batch = [aLink({ tenantId, tags: ['x'] }), aLink({ tenantId }), aLink({ tenantId })];
      await shard.insertMany(batch);
      await expect(shard.insertMany([aLink({ tenantId }), aLink({ code: link.code })])).rejects.toBeInstanceOf(DuplicateLinkError);
      await expect(shard.insert(aLink({ code: link.code }))).rejects.toBeInstanceOf(DuplicateLinkError);

      const edited = { ...link, targetUrl: 'https://example.com/edited', version: 2 };
      expect(await shard.replace(edited, 1)).toBe(true);
      expect(await shard.replace({ ...link, version: 3 }, 1)).toBe(false); // stale: no event
      expect(await shard.remove(batch[1], 5, new Date(Date.now() + 86_400_000))).toBe(false);
      expect(await shard.remove(edited, 2, new Date(Date.now() + 86_400_000))).toBe(true);
      const due = aLink({ tenantId, expiresAt: new Date(Date.now() - 60_000) });
      await shard.insert(due);
      const expired = await shard.expireDue(new Date(), 1000);
      expect(expired.map((l) => l.id)).toContain(due.id);

      // The expiry job may have marked links of other tests: their events are this store's too.
      const events = (await shard.leased(owner, null, 100)).filter((e) => e.tenantId === tenantId);
      expect(events.map(shape)).toEqual([
        ['link.created', link.code, 1],
        ...batch.map((l) => ['link.created', l.code, 1]),
        ['link.edited', link.code, 2],
        ['link.deleted', link.code, 3],
        ['link.created', due.code, 1],
        ...expired.filter((l) => l.tenantId === tenantId).map((l) => ['link.edited', l.code, 2]),
      ]);
      const ids = events.map((e) => BigInt(e.id));
      expect(ids.every((id, i) => i === 0 || id > ids[i - 1])).toBe(true);
      expect((await shard.leased(owner, events[4].id, 100)).filter((e) => e.tenantId === tenantId)).toEqual(events.slice(5));
    });

    it('renews the owner’s events among the ids it is given and no other (a relay renews what it has read, not its backlog)', async () => {
      const { owner, shard } = await owned();
      for (let i = 0; i < 3; i++) await shard.insert(aLink());
      const [first, second, third] = await shard.leased(owner, null, 10);
      const now = Date.now();
      expect(await shard.renew(owner, new Date(now + 10 * LEASE), [first.id, third.id])).toBe(2);
      expect(await shard.renew(`x-${randomUUID().slice(0, 8)}`, new Date(now + 10 * LEASE), [second.id])).toBe(0); // not that owner's
      // Past the lease they were written with: the one not renewed is free to take, the renewed ones are not.
      const other = `o-${randomUUID().slice(0, 8)}`;
      const taken = await shard.claimExpired(other, new Date(now + LEASE + 1000), new Date(now + 2 * LEASE), 1000);
      expect(taken.filter((e) => [first.id, second.id, third.id].includes(e.id)).map((e) => e.id)).toEqual([second.id]);
      await shard.settle(owner, [first.id, third.id]);
      await shard.settle(other, [second.id]);
    });

    it('leases: an owner reads its own events only; another takes them over once the lease ran out, never two at once; renew and settle act on the owner’s', async () => {
      const { owner, shard } = await owned();
      const links = [aLink(), aLink(), aLink()];
      for (const l of links) await shard.insert(l);
      const mine = await shard.leased(owner, null, 10);
      expect(mine.map((e) => e.linkId)).toEqual(links.map((l) => l.id));
      const [b, c] = [`b-${randomUUID().slice(0, 8)}`, `c-${randomUUID().slice(0, 8)}`];
      expect(await shard.leased(b, null, 10)).toEqual([]);
      const ours = (events: OutboxEvent[]) => events.filter((e) => mine.some((m) => m.id === e.id));

      const now = Date.now();
      expect(ours(await shard.claimExpired(b, new Date(now), new Date(now + 1000), 1000))).toEqual([]); // leased for a minute
      const later = now + LEASE + 1000;
      const [byB, byC] = await Promise.all([
        shard.claimExpired(b, new Date(later), new Date(later + 5000), 1000),
        shard.claimExpired(c, new Date(later), new Date(later + 5000), 1000),
      ]);
      expect(ours(byB).length + ours(byC).length).toBe(3);
      expect(ours(byB).filter((e) => byC.some((x) => x.id === e.id))).toEqual([]);
      expect(await shard.leased(owner, null, 10)).toEqual([]);
      const holder = ours(byB).length ? b : c;
      const other = holder === b ? c : b;
      expect(
        ours(await shard.leased(holder, null, 100))
          .map((e) => e.id)
          .sort(),
      ).toEqual(
        ours([...byB, ...byC])
          .map((e) => e.id)
          .sort(),
      );

      // Renewed, the lease holds past the old end; given back (an end in the past), anyone takes it at once.
      expect(await shard.renew(holder, new Date(later + 60_000))).toBeGreaterThanOrEqual(ours([...byB, ...byC]).length);
      expect(ours(await shard.claimExpired(other, new Date(later + 10_000), new Date(later + 20_000), 1000))).toEqual([]);
      await shard.renew(holder, new Date(0));
      const taken = ours(await shard.claimExpired(other, new Date(now), new Date(now + LEASE), 1000));
      expect(taken.map((e) => e.id).sort()).toEqual(mine.map((e) => e.id).sort());

      const { events: waiting } = await shard.backlog();
      await shard.settle(holder, [mine[0].id]); // not the holder's any more: stays
      await shard.settle(other, [mine[0].id, mine[1].id]);
      expect(ours(await shard.leased(other, null, 100)).map((e) => e.id)).toEqual([mine[2].id]);
      const after = await shard.backlog();
      expect(after.events).toBe(waiting - 2);
      expect(after.oldest).toBeInstanceOf(Date);
    });
  });
}
