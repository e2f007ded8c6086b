import { DomainError } from '@shortlink/core';
import { ConsistentHashRing } from '@shortlink/shard-router';
import { CacheEventConsumer, LinkEventRelay, UNCLAIMED } from '@shortlink/links-domain';
import { aTestLink, RecordingChangeFeed, RecordingLinkCache } from '@shortlink/links-domain/testing';
import { MovePhase, RingSpec } from './ring';
import { RoutingState } from './routing-state';
import { ShardedLinkRepository } from './sharded-link-repository';
import { InMemoryMovableShard } from './testing/in-memory-resharding';

const FOUR: RingSpec = { strategy: 'ring', virtualNodes: 150, shards: ['s0', 's1', 's2', 's3'].map((name) => ({ name })) };
const FIVE: RingSpec = { ...FOUR, shards: [...FOUR.shards, { name: 's4' }] };

const aLink = aTestLink;

const moving = (phase: MovePhase) => new RoutingState({ version: 2, spec: FOUR, move: { id: 'm1', phase, to: FIVE } });
const stable = (spec: RingSpec, version = 1) => new RoutingState({ version, spec, move: null });

/** A code that moves to s4 when it joins, and one that stays, under FOUR → FIVE. */
function codes() {
  const before = new ConsistentHashRing(FOUR.shards);
  const after = new ConsistentHashRing(FIVE.shards);
  let mover = '';
  let stayer = '';
  for (let i = 0; !mover || !stayer; i++) {
    const c = `code${i}`;
    if (before.shardFor(c) !== after.shardFor(c)) mover ||= c;
    else stayer ||= c;
  }
  return { mover, stayer, from: before.shardFor(mover), staysOn: before.shardFor(stayer) };
}

describe('ShardedLinkRepository', () => {
  const setup = (state = stable(FOUR), options = {}) => {
    const shards = ['s0', 's1', 's2', 's3', 's4'].map((n) => new InMemoryMovableShard(n));
    const byName = (n: string) => shards.find((s) => s.shardName === n)!;
    const repo = new ShardedLinkRepository(state, shards.slice(0, 4), { resolveStore: (n) => (n === 's4' ? shards[4] : null), ...options });
    return { shards, byName, repo };
  };
  const { mover, stayer, from, staysOn } = codes();

  it('lists the crawlable codes of a domain over every shard, each once, where the ring holds it; a shard down fails the list', async () => {
    const { repo, byName } = setup(moving('copying'));
    const crawlable = Array.from({ length: 12 }, (_, i) => aLink(`crawl${i}`, { crawlable: true }));
    for (const link of [...crawlable, aLink('plain1'), aLink('crawl-elsewhere', { domain: 'other.example', crawlable: true })]) await repo.insert(link);
    // A leftover copy on a shard that does not hold the code is not listed twice, nor from there.
    await byName(from).insert(aLink(stayer, { crawlable: true }));
    expect(await repo.crawlableCodes('sho.rt', 100)).toEqual(crawlable.map((l) => l.code).sort());
    expect(await repo.crawlableCodes('sho.rt', 3)).toEqual(
      crawlable
        .map((l) => l.code)
        .sort()
        .slice(0, 3),
    );
    byName('s1').down = true;
    await expect(repo.crawlableCodes('sho.rt', 100)).rejects.toBeTruthy();
  });

  it('keeps the fixed-router form: every code on the shard the router names', async () => {
    const shards = ['a', 'b'].map((n) => new InMemoryMovableShard(n));
    const router = new ConsistentHashRing(shards.map((s) => ({ name: s.shardName })));
    const repo = new ShardedLinkRepository(router, shards);
    const link = aLink('abc1234');
    await repo.insert(link);
    expect(shards.find((s) => s.shardName === router.shardFor('abc1234'))!.rows.get('sho.rt/abc1234')).toEqual(link);
    expect(repo.routing.version).toBe(0);
    expect(repo.router).toBe(router);
  });

  it('refuses a routing whose shard has no store, and keeps the current one', () => {
    const { repo } = setup();
    expect(() => repo.setRouting(stable({ ...FOUR, shards: [...FOUR.shards, { name: 'nowhere' }] }, 2))).toThrow(/"nowhere".*no store/);
    expect(repo.routing.version).toBe(1);
  });

  it('a link changed during a move has one event per change, on its deciding shard; after the switch the relay delivers it as its new owner holds it (docs/design.md, "Edits reach every instance")', async () => {
    const { repo, byName, shards } = setup(moving('dual_write'));
    const link = aLink(mover);
    await repo.insert(link);
    const edited = { ...link, targetUrl: 'https://example.com/moved-and-edited', version: 2 };
    expect(await repo.replace(edited, 1)).toBe(true);
    // The copies on the new owner are not changes of their own: no event there.
    expect(byName(from).events.map((e) => [e.kind, e.version])).toEqual([
      ['link.created', 1],
      ['link.edited', 2],
    ]);
    expect(byName('s4').events).toEqual([]);
    // The move switches and the old owner's rows are cleaned up before any relay ran: the events stay where they were written.
    repo.setRouting(stable(FIVE, 3));
    byName(from).rows.delete(`sho.rt/${mover}`);
    const clock = { t: 0, now: () => clock.t };
    const [cache, feed] = [new RecordingLinkCache(), new RecordingChangeFeed()];
    const relay = new LinkEventRelay({ stamp: UNCLAIMED, all: () => shards }, [new CacheEventConsumer(cache, feed, repo)], {
      intervalMs: 1000,
      leaseMs: 10_000,
      confirmAfterMs: 3000,
      clock,
    });
    await relay.round();
    expect(cache.values.get(`sho.rt/${mover}`)).toMatchObject({ targetUrl: 'https://example.com/moved-and-edited', version: 2 });
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: mover, version: 2 }]);
    clock.t += 3000;
    await relay.round();
    expect(byName(from).events).toEqual([]);
  });

  it('dual_write: reads the old owner; creates, edits and deletes reach both owners; the delete leaves a tombstone', async () => {
    const { repo, byName } = setup(moving('dual_write'));
    const link = aLink(mover);
    await repo.insert(link);
    expect(byName(from).rows.get(`sho.rt/${mover}`)).toEqual(link);
    expect(byName('s4').rows.get(`sho.rt/${mover}`)).toEqual(link);
    byName('s4').rows.set(`sho.rt/${mover}`, { ...link, targetUrl: 'https://example.com/only-on-s4' });
    expect((await repo.findByCode(link))!.targetUrl).toBe(link.targetUrl);

    const edited = { ...link, targetUrl: 'https://example.com/edited', version: 2 };
    expect(await repo.replace(edited, 1)).toBe(true);
    expect(byName('s4').rows.get(`sho.rt/${mover}`)).toEqual(edited);
    expect(await repo.replace({ ...edited, version: 3 }, 1)).toBe(false); // the old owner decides

    expect(await repo.remove(link, 2, new Date(Date.UTC(2027, 0, 1)))).toBe(true);
    expect(byName(from).rows.has(`sho.rt/${mover}`)).toBe(false);
    expect(byName('s4').rows.has(`sho.rt/${mover}`)).toBe(false);
    expect(byName('s4').tombstones.has(link.id)).toBe(true);
    // A copy read before the delete cannot bring the link back.
    expect(await byName('s4').upsertLink(edited)).toBe(false);
  });

  it('while a move runs, the old owner journals each write of a moving key with the write; other keys and the new owner journal nothing', async () => {
    const { repo, byName, shards } = setup(moving('copying'));
    const link = aLink(mover);
    const other = aLink(stayer);
    await repo.insert(link);
    await repo.insert(other);
    const candidates = Array.from({ length: 200 }, (_, i) => `batch${i}`);
    const batchMover = aLink(candidates.find((c) => repo.routing.route(c).moving)!);
    const batch = [batchMover, aLink(candidates.find((c) => !repo.routing.route(c).moving)!)];
    await repo.insertInStatements(batch, 10);
    const journaled = () => shards.flatMap((s) => [...s.journaled.keys()].map((id) => `${s.shardName}:${id}`)).sort();
    const fromOf = (code: string) => (repo.routing.route(code) as { from: string }).from;
    expect(journaled()).toEqual([`${from}:${link.id}`, `${fromOf(batchMover.code)}:${batchMover.id}`].sort());
    expect(byName('s4').rows.get(`sho.rt/${batchMover.code}`)).toEqual(batchMover);
    const clear = () => shards.forEach((s) => s.journaled.clear());
    clear();
    expect(await repo.replace({ ...link, version: 2 }, 1)).toBe(true);
    expect(await repo.replace({ ...link, version: 9 }, 1)).toBe(false);
    expect(journaled()).toEqual([`${from}:${link.id}`]);
    clear();
    expect(await repo.remove(link, 2, new Date(Date.UTC(2027, 0, 1)))).toBe(true);
    expect(await repo.replace({ ...other, version: 2 }, 1)).toBe(true);
    expect(journaled()).toEqual([`${from}:${link.id}`]);
    // No move: nothing is journaled.
    repo.setRouting(stable(FIVE, 3));
    clear();
    await repo.insert(aLink(mover.toUpperCase()));
    expect(journaled()).toEqual([]);
  });

  it('copying: reads the new owner first, then the old; a new owner that is down falls back to the old one', async () => {
    const { repo, byName } = setup(moving('copying'));
    const link = aLink(mover);
    await byName(from).insert(link); // not copied yet
    expect(await repo.findByCode(link)).toEqual(link);
    const copy = { ...link, version: 2, targetUrl: 'https://example.com/newer' };
    await byName('s4').upsertLink(copy);
    expect(await repo.findByCode(link)).toEqual(copy);
    byName('s4').down = true;
    expect(await repo.findByCode(link)).toEqual(link);
  });

  it('frozen: writes of a moving key wait for the switch and then go to the new owner; a relocatable create fails at once; other keys go on', async () => {
    const { repo, byName } = setup(moving('frozen'));
    const moved = aLink(mover);
    await byName(from).insert(moved);
    await byName('s4').upsertLink(moved);
    await repo.insert(aLink(stayer));
    expect(byName(staysOn).rows.has(`sho.rt/${stayer}`)).toBe(true);

    await expect(repo.insert(aLink(mover, { domain: 'go.example' }), { relocatable: true })).rejects.toMatchObject({
      code: 'SHARD_UNAVAILABLE',
      details: { moving: true },
    });
    const edit = repo.replace({ ...moved, version: 2, targetUrl: 'https://example.com/after-switch' }, 1);
    let settled = false;
    void edit.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    repo.setRouting(stable(FIVE, 3));
    expect(await edit).toBe(true);
    // Counted for the metrics: one write waited, about as long as the freeze lasted here.
    expect(repo.frozenWaits.count).toBe(1);
    expect(repo.frozenWaits.longestMs).toBeGreaterThanOrEqual(45);
    expect(byName('s4').rows.get(`sho.rt/${mover}`)!.targetUrl).toBe('https://example.com/after-switch');
    expect(byName(from).rows.get(`sho.rt/${mover}`)!.version).toBe(1); // the old copy waits for the cleanup
  });

  it('frozen: a write that waits longer than frozenWaitMs gets 503 with Retry-After', async () => {
    const { repo } = setup(moving('frozen'), { frozenWaitMs: 30 });
    await expect(repo.replace(aLink(mover, { version: 2 }), 1)).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE', details: { retryAfterSeconds: 1 } });
  });

  it('lists each link once while it is on two shards, and skips rows a shard holds without owning them', async () => {
    const { repo, byName } = setup(moving('copying'));
    const a = aLink(mover);
    const b = aLink(stayer);
    await repo.insert(a);
    await repo.insert(b);
    await byName(staysOn === 's0' ? 's1' : 's0').insert({ ...aLink(stayer, { domain: 'x.example' }), id: '1' }); // a leftover somewhere else
    const listed = await repo.listByTenant({ tenantId: 't1', after: null, limit: 10 });
    expect(listed.map((l) => l.id)).toEqual([b.id, a.id]);
  });

  it('finds a link by its id on whichever shard holds it, the deciding copy while a move runs; null for an id nobody holds (docs/design.md, "Conversions")', async () => {
    const { repo } = setup(moving('dual_write'));
    const links = Array.from({ length: 8 }, (_, i) => aLink(`byid${i}`, { id: String(100 + i * 7) }));
    for (const link of [...links, aLink(mover, { id: '500' })]) await repo.insert(link);
    for (const link of links) expect((await repo.findById(link.id))?.code).toBe(link.code);
    expect((await repo.findById('500'))?.code).toBe(mover);
    for (const missing of ['101', '0', '99999', 'x1', '']) expect(await repo.findById(missing)).toBeNull();
  });

  it('pauses the expiry job on the shards of a move', async () => {
    const { repo, byName } = setup(moving('copying'));
    await byName('s0').insert(aLink('exp1234', { expiresAt: new Date(1000) }));
    expect(await repo.expireDue(new Date(), 10)).toEqual([]);
    repo.setRouting(stable(FIVE, 3));
    expect((await repo.expireDue(new Date(), 10)).map((l) => [l.code, l.status])).toEqual([['exp1234', 'expired']]);
  });

  it('without a current ring (lease lapsed) refuses writes and looks for a missing code on every shard', async () => {
    const { repo, byName } = setup();
    const link = aLink(stayer);
    const elsewhere = staysOn === 's0' ? 's1' : 's0';
    await byName(elsewhere).insert(link);
    expect(await repo.findByCode(link)).toBeNull();
    repo.attachLease({ valid: () => false, describe: () => 'the shard ring could not be read for 12 s' });
    expect(await repo.findByCode(link)).toEqual(link);
    await expect(repo.insert(aLink('zz12345'))).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE', details: { reason: 'ring-unknown' } });
  });

  it('fails a shard that does not answer within timeoutMs, then fails fast after breakerFailures', async () => {
    const { repo, byName } = setup(stable(FOUR), { timeoutMs: 40, breakerFailures: 2, breakerOpenMs: 60_000 });
    const hung = byName(staysOn);
    hung.findByCode = () => new Promise(() => undefined);
    const id = { domain: 'sho.rt', code: stayer };
    // On the fake clock: the time waited is the deadline's, whatever the load of the machine.
    jest.useFakeTimers();
    try {
      for (let i = 0; i < 2; i++) {
        const t0 = Date.now();
        const failed = repo.findByCode(id).then(
          () => ({ error: null, waitedMs: Date.now() - t0 }),
          (e: DomainError) => ({ error: e, waitedMs: Date.now() - t0 }),
        );
        await jest.advanceTimersByTimeAsync(1000);
        const { error, waitedMs } = await failed;
        expect(error).toMatchObject({ code: 'SHARD_UNAVAILABLE', details: { shard: staysOn } });
        expect(waitedMs).toBeLessThanOrEqual(40);
      }
      expect(repo.isAvailable(staysOn)).toBe(false);
      await expect(repo.findByCode(id)).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE', details: { retryAfterSeconds: 60 } });
      // Other shards are not affected.
      const other = aLink(mover);
      await repo.insert(other);
      expect(await repo.findByCode(other)).toEqual(other);
    } finally {
      jest.useRealTimers();
    }
  });

  it('keeps no look-up on a hung shard longer than timeoutMs, also while its breaker probes the shard (docs/design.md, "Failure containment")', async () => {
    jest.useFakeTimers();
    try {
      const { repo, byName } = setup(stable(FOUR), { timeoutMs: 1000, breakerFailures: 2, breakerOpenMs: 500 });
      byName(staysOn).findByCode = () => new Promise(() => undefined);
      const id = { domain: 'sho.rt', code: stayer };
      const lookUp = () => {
        const started = Date.now();
        return repo.findByCode(id).then(
          () => ({ code: 'answered', waitedMs: Date.now() - started }),
          (e: DomainError) => ({ code: e.code, waitedMs: Date.now() - started }),
        );
      };
      const first = [lookUp(), lookUp()]; // time out at 1000 ms and open the breaker
      await jest.advanceTimersByTimeAsync(700);
      const late = lookUp(); // begun while the breaker was closed: times out at 1700 ms, while the probe below runs
      await jest.advanceTimersByTimeAsync(800);
      const probe = lookUp(); // 500 ms after the breaker opened: this one tries the shard again
      const duringProbe = lookUp();
      await jest.advanceTimersByTimeAsync(3000);
      const outcomes = await Promise.all([...first, late, probe, duringProbe]);
      expect(outcomes.map((o) => o.code)).toEqual(Array(5).fill('SHARD_UNAVAILABLE'));
      expect(Math.max(...outcomes.map((o) => o.waitedMs))).toBeLessThanOrEqual(1000);
    } finally {
      jest.useRealTimers();
    }
  });

  it('gives a multi-row insert ten times the look-up bound: a slow batch chunk is written, a single insert as slow fails', async () => {
    const { repo, byName } = setup(stable(FOUR), { timeoutMs: 40, breakerFailures: 100 });
    const slow = byName(staysOn);
    const insertMany = slow.insertMany.bind(slow);
    const insert = slow.insert.bind(slow);
    slow.insertMany = async (links) => (await new Promise((r) => setTimeout(r, 120)), insertMany(links));
    slow.insert = async (link) => (await new Promise((r) => setTimeout(r, 120)), insert(link));
    const chunk = aLink(stayer);
    expect(await repo.insertInStatements([chunk], 1000)).toEqual([{ links: [chunk], error: null }]);
    expect(await repo.findByCode(chunk)).toEqual(chunk);
    const single = aLink(Array.from({ length: 1000 }, (_, i) => `q${i}abcde`).find((c) => repo.shardNameFor(c) === staysOn)!);
    await expect(repo.insert(single)).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE' });
  });

  it('tells when a statement that passed its deadline has ended on its shard, which may have committed it after all', async () => {
    const { repo, byName } = setup(stable(FOUR), { timeoutMs: 10, bulkTimeoutMs: 100, breakerFailures: 100 });
    const slow = byName(staysOn);
    const insertMany = slow.insertMany.bind(slow);
    slow.insertMany = async (links) => (await new Promise((r) => setTimeout(r, 150)), insertMany(links));
    const chunk = aLink(stayer);
    const [outcome] = await repo.insertInStatements([chunk], 1000);
    expect(outcome.error).toMatchObject({ code: 'SHARD_UNAVAILABLE' });
    expect(await slow.findByCode(chunk)).toBeNull(); // not yet
    expect(await (outcome as { settled?: Promise<boolean> }).settled).toBe(true);
    expect(await slow.findByCode(chunk)).toEqual(chunk); // committed after the answer
    // A statement that never ends on its shard is given up once more after the bulk deadline.
    slow.insertMany = () => new Promise<never>(() => undefined);
    const sameShard = Array.from({ length: 1000 }, (_, i) => `h${i}abcde`).find((c) => repo.shardNameFor(c) === staysOn)!;
    const [hung] = await repo.insertInStatements([aLink(sameShard)], 1000);
    expect(hung.error).toMatchObject({ code: 'SHARD_UNAVAILABLE' });
    expect(await (hung as { settled?: Promise<boolean> }).settled).toBe(false);
  });

  it('an edit or a delete that passed its deadline and commits afterwards leaves its event in its shard’s outbox, which the relay delivers (docs/design.md, "Edits reach every instance")', async () => {
    const { repo, byName } = setup(stable(FOUR), { timeoutMs: 10, breakerFailures: 10 });
    const slow = byName(staysOn);
    const link = aLink(stayer);
    await repo.insert(link);
    const late = <A extends unknown[]>(write: (...args: A) => Promise<boolean>) => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let committed: Promise<boolean> | undefined;
      return { write: (...args: A) => (committed = gate.then(() => write(...args))), commit: () => (release(), committed!) };
    };
    const edit = late(slow.replace.bind(slow));
    slow.replace = edit.write;
    await expect(repo.replace({ ...link, version: 2, targetUrl: 'https://example.com/late' }, 1)).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE' });
    expect(slow.events.map((e) => [e.kind, e.version])).toEqual([['link.created', 1]]);
    expect(await edit.commit()).toBe(true);
    const removal = late(slow.remove.bind(slow));
    slow.remove = removal.write;
    await expect(repo.remove(link, 2, new Date(Date.UTC(2027, 0, 1)))).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE' });
    expect(await removal.commit()).toBe(true);
    expect(slow.events.map((e) => [e.kind, e.version, e.linkId])).toEqual([
      ['link.created', 1, link.id],
      ['link.edited', 2, link.id],
      ['link.deleted', 3, link.id],
    ]);
  });
});
