import { randomUUID } from 'crypto';
import { Link } from '@shortlink/links-domain';
import { Resharder, RingSpec, RingWatcher, RoutingState, routerOf, ShardedLinkRepository } from '@shortlink/sharding-domain';
import { scratchMysqlDatabases } from '@shortlink/testing';
import { aLink } from '../contract/link-store.contract';
import { MysqlLinkShardStore } from './mysql-link-shard-store';
import { MysqlRingStore } from './mysql-ring-store';
import { LINKS_MYSQL_MIGRATIONS } from './migrations';

jest.setTimeout(120_000);

const ONE: RingSpec = { strategy: 'ring', virtualNodes: 150, shards: [{ name: 's0' }] };
const TWO: RingSpec = { ...ONE, shards: [{ name: 's0' }, { name: 's1' }] };

/**
 * The frozen step of a move on MariaDB (docs/design.md, "Online resharding"): it compares only the
 * links written since `verify` began, which the app's writes entered in the old owner's move
 * journal in their own transactions. Scratch databases: two shards and a meta database.
 */
describe('resharding on MySQL: the freeze compares the journal', () => {
  let scratch: { urls: string[]; drop(): Promise<void> };
  let s0: MysqlLinkShardStore;
  let s1: MysqlLinkShardStore;
  let ring: MysqlRingStore;
  let watcher: RingWatcher | null = null;

  beforeAll(async () => {
    scratch = await scratchMysqlDatabases(['freeze_s0', 'freeze_s1', 'freeze_meta']);
    s0 = await MysqlLinkShardStore.open('s0', { url: scratch.urls[0] });
    s1 = await MysqlLinkShardStore.open('s1', { url: scratch.urls[1] });
    ring = new MysqlRingStore({ url: scratch.urls[2] }, LINKS_MYSQL_MIGRATIONS);
  });
  afterAll(async () => {
    await watcher?.stop();
    await Promise.all([s0?.close(), s1?.close(), ring?.close()]);
    await scratch?.drop();
  });

  it('a link written after verify began, by an app or only on its old owner, ends right on its new owner; the freeze reads only those rows', async () => {
    // The app: a repository routed by the ring in the meta database.
    const repository = new ShardedLinkRepository(new RoutingState({ version: 0, spec: ONE, move: null }), [s0, s1]);
    watcher = new RingWatcher(ring, repository, { instanceId: `it-${randomUUID()}`, app: 'it', pollMs: 50, leaseMs: 5000, bootstrap: ONE });
    await watcher.start();
    const links = Array.from({ length: 240 }, () => aLink({ tags: ['freeze'] }));
    await repository.insertInStatements(links, 100);
    const [before, after] = [routerOf(ONE), routerOf(TWO)];
    const moves = (l: Link) => before.shardFor(l.code) !== after.shardFor(l.code);
    const movers = links.filter(moves);
    expect(movers.length).toBeGreaterThan(40);
    let fresh = aLink();
    while (!moves(fresh)) fresh = aLink();
    const until = new Date(Math.floor(Date.now() / 1000) * 1000 + 30 * 86_400_000);
    // The edits (version 2), by code, as they will be written.
    const edited = new Map<string, Link>();
    const edit = (l: Link, url: string) => {
      const at = new Date(Math.floor(Date.now() / 1000) * 1000);
      edited.set(l.code, { ...l, version: 2, targetUrl: url, updatedAt: at });
      return edited.get(l.code)!;
    };

    let step = '';
    const reporter = { step: (s: string) => void (step = s), copy: () => undefined, note: () => undefined };
    // While copying (before verify): an edit that verify's emptying of the journal forgets (it finds it equal on both sides).
    let copyingEdit = false;
    const scan0 = s0.scanRows.bind(s0);
    s0.scanRows = async (afterId, limit) => {
      if (step === 'copying' && !copyingEdit) copyingEdit = await repository.replace(edit(movers[6], 'https://example.com/while-copying'), 1);
      return scan0(afterId, limit);
    };
    // Once verify has compared the old owner (it reads the new owner last): writes it cannot have seen there.
    let wrote = false;
    const scan1 = s1.scanRows.bind(s1);
    s1.scanRows = async (afterId, limit) => {
      if (step === 'verify' && !wrote) {
        wrote = true;
        // An app (both halves): three edits, a delete, a create.
        for (const l of movers.slice(0, 3)) expect(await repository.replace(edit(l, `https://example.com/during-verify/${l.code}`), 1)).toBe(true);
        expect(await repository.remove(movers[3], 1, until)).toBe(true);
        await repository.insert(fresh);
        // An app that died after its write on the old owner, before the copy: only the journal has it.
        expect(await s0.replaceJournaled(edit(movers[4], 'https://example.com/old-owner-only'), 1)).toBe(true);
        expect(await s0.removeJournaled(movers[5], 1, until)).toBe(true);
      }
      return scan1(afterId, limit);
    };

    const tool = new Resharder(ring, (name) => ({ s0, s1 })[name as 's0' | 's1'], {
      watcherAliveMs: 3000,
      ackTimeoutMs: 20_000,
      batchSize: 100,
      reporter,
      sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 20))),
    });
    const done = await tool.run({ add: [{ name: 's1' }] });

    expect(copyingEdit).toBe(true);
    expect(wrote).toBe(true);
    expect(done.step).toBe('done');
    expect(done.plan.moving).toBe(movers.length);
    // The seven links written after verify began, each read on both sides where it exists (twice: repair,
    // then the final comparison); deleted ones are on neither side by then.
    expect(done.freeze).toMatchObject({ journaled: 7, rowsRead: 2 * (3 * 2 + 2 + 2), heldMs: expect.any(Number) });
    expect(done.verify!.map((f) => [`${f.from}->${f.to}`, f.sourceRows, f.targetRows])).toEqual([['s0->s1', 5, 5]]);

    // Every link where the two-shard ring puts it, as last written; deleted codes retired there.
    expect(repository.routing.ring.spec.shards.map((s) => s.name)).toEqual(['s0', 's1']);
    const expected = new Map<string, Link | null>(links.map((l) => [l.code, l]));
    expect([...edited.keys()].sort()).toEqual([0, 1, 2, 4, 6].map((i) => movers[i].code).sort());
    for (const [code, link] of edited) expected.set(code, link);
    expected.set(movers[3].code, null);
    expected.set(movers[5].code, null);
    expected.set(fresh.code, fresh);
    for (const [code, link] of expected) {
      const owner = after.shardFor(code) === 's1' ? s1 : s0;
      const other = owner === s1 ? s0 : s1;
      const id = { domain: 'sho.rt', code };
      expect(await owner.findByCode(id)).toEqual(link);
      expect(await other.findByCode(id)).toBeNull();
    }
    for (const gone of [movers[3], movers[5]]) expect(await s1.retiredUntil(gone, new Date())).toEqual(until);
    expect(await s0.journalPage(null, 10)).toEqual([]);
    expect(await s1.journalPage(null, 10)).toEqual([]);
  });
});
