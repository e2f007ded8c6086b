import { ShardRouterError } from '@shortlink/shard-router';
import { Link, NO_OPTIONS } from '@shortlink/links-domain';
import { ShardedLinkRepository } from './sharded-link-repository';
import { InMemoryMovableShard, InMemoryRingStore } from './testing/in-memory-resharding';
import { MoveProgress } from './ports';
import { ReshardError, Resharder, ResharderOptions, targetSpec } from './resharder';
import { RingSpec, routerOf } from './ring';
import { RingWatcher } from './ring-watcher';
import { RoutingState } from './routing-state';

const ring = (names: string[], strategy: 'ring' | 'jump' = 'ring'): RingSpec => ({ strategy, virtualNodes: 150, shards: names.map((name) => ({ name })) });
const FOUR = ring(['s0', 's1', 's2', 's3']);
const FIVE = ring(['s0', 's1', 's2', 's3', 's4']);

jest.setTimeout(30_000);
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Deterministic links: the same codes and ids in every installation built by `install`. */
function linkNo(i: number, over: Partial<Link> = {}): Link {
  let n = i * 7919 + 12345;
  let code = '';
  for (let k = 0; k < 7; k++) {
    code += ALPHABET[n % 62];
    n = Math.floor(n / 62) + k * 31;
  }
  const at = new Date(Date.UTC(2026, 11, 3, 0, 0, i % 60));
  return {
    ...NO_OPTIONS,
    id: String(10_000 + i),
    domain: 'sho.rt',
    code,
    targetUrl: `https://example.com/${i}`,
    tenantId: 't1',
    createdAt: at,
    updatedAt: at,
    expiresAt: null,
    status: 'active',
    redirectType: 302,
    version: 1,
    moderation: 'clear',
    moderationReason: null,
    ...over,
  };
}

/**
 * The tool polls every 100 ms for the instances' acknowledgements and every 500 ms for a stale claim: here every 10 ms, so
 * that the same deadlines, on the same clock, are met sooner. The pacing of the copy (shorter sleeps) is kept as it is, and
 * the test of writes during a move keeps the tool's own polls.
 */
const pollQuickly = (ms: number) => new Promise<void>((r) => setTimeout(r, ms >= 100 ? 10 : ms));

/** Shards s0..s4 (s4 empty, not on the ring), a ring store at version 1 and one "app": a repository with its watcher. */
async function install(count: number, spec = FOUR) {
  const shards = new Map(['s0', 's1', 's2', 's3', 's4'].map((n) => [n, new InMemoryMovableShard(n)]));
  const store = new InMemoryRingStore();
  const repository = new ShardedLinkRepository(new RoutingState({ version: 0, spec, move: null }), [...shards.values()]);
  const watcher = new RingWatcher(store, repository, {
    instanceId: 'app-1',
    app: 'test',
    pollMs: 10,
    leaseMs: 5000,
    bootstrap: spec,
    log: (l, m) => process.env.DEBUG_RING && console.log(Date.now() % 100000, l, m),
  });
  await watcher.start();
  const links = Array.from({ length: count }, (_, i) => linkNo(i));
  for (const l of links) await repository.insert(l);
  const storeOf = (name: string) => {
    const s = shards.get(name);
    if (!s) throw new Error(`unknown shard ${name}`);
    return s;
  };
  const tool = (over: Partial<ResharderOptions> = {}) =>
    new Resharder(store, storeOf, { watcherAliveMs: 2000, batchSize: 50, ackTimeoutMs: 5000, sleep: pollQuickly, ...over });
  return { shards, store, repository, watcher, links, tool };
}

/** Every row of every shard, by shard. */
const contents = (shards: Map<string, InMemoryMovableShard>) =>
  Object.fromEntries([...shards].map(([n, s]) => [n, [...s.rows.values()].sort((a, b) => a.code.localeCompare(b.code))]));

describe('Resharder', () => {
  it('plans the addition of a fifth shard: about 1/5 of the links move, every one of them to the new shard', async () => {
    const { tool, watcher } = await install(4000);
    const plan = await tool().plan({ add: [{ name: 's4' }] });
    await watcher.stop();
    expect(plan.examined).toBe(4000);
    expect(plan.share).toBeGreaterThan(0.15);
    expect(plan.share).toBeLessThan(0.25);
    expect(Object.keys(plan.flows).sort()).toEqual(['s0->s4', 's1->s4', 's2->s4', 's3->s4']);
    expect(plan.after.s4).toBe(plan.moving);
  });

  it('adds a shard while the app creates, edits and deletes links: every link ends on its new owner, once, as last written', async () => {
    const { shards, store, repository, watcher, links, tool } = await install(1500);
    const expected = new Map<string, Link | null>(links.map((l) => [l.code, l]));
    // Edits and deletes aim at links that move, the ones dual reads and writes are about.
    const [four, five] = [routerOf(FOUR), routerOf(FIVE)];
    const movers = links.filter((l) => four.shardFor(l.code) !== five.shardFor(l.code)).slice(0, 60);
    let writes = 0;
    let stop = false;
    /** The phases the writer itself met (checked before its write, which a frozen phase holds). */
    const met = new Set<string>();
    const stale: string[] = [];
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        met.add(repository.routing.phase ?? 'stable');
        const created = linkNo(100_000 + i);
        await repository.insert(created);
        expected.set(created.code, created);
        const victim = movers[i % movers.length];
        const current = expected.get(victim.code);
        if (current) {
          if (i % 5 === 4) {
            if (await repository.remove(current, current.version, new Date(Date.UTC(2027, 0, 1)))) expected.set(current.code, null);
          } else {
            const next = { ...current, targetUrl: `https://example.com/edit/${i}`, version: current.version + 1 };
            if (await repository.replace(next, current.version)) expected.set(current.code, next);
          }
          // Read your own write, whatever the phase (the new owner is read first while copying).
          const seen = await repository.findByCode(current);
          const wanted = expected.get(current.code) ?? null;
          if (seen?.version !== wanted?.version || seen?.targetUrl !== wanted?.targetUrl)
            stale.push(`${current.code}: read v${seen?.version} in ${repository.routing.phase}, wrote v${wanted?.version}`);
        }
        writes++;
        await new Promise((r) => setTimeout(r, 2)); // a bounded load: a few hundred writes a second
      }
    })();
    // The tool's own polls here (each phase lasts as long as in production), and an explicit step instead of luck: whenever
    // the tool waits (for the instances' acknowledgements, or pacing the copy), it waits on until the writer has met the phase
    // the app routes with, so the writer meets every phase however busy the machine is (under a CPU hog a phase of 100 ms
    // could pass between two turns of the writer). The watcher is never gone here: the liveness bounds are set far beyond
    // any stall of a loaded machine, which would otherwise make a live watcher look dead and the tool go on without it.
    // Outside a frozen phase (where the writer's writes of moving links wait for the tool: waiting for them would deadlock)
    // it also waits for 8 more writes, so the writer's share of the move does not depend on the scheduler either: the tool
    // waits at least once for the acknowledgements of dual_write, copying and the switch, 24 writes at least (a copy paced
    // slower than its rate, as under a CPU hog, does not sleep: 3 writes a wait made 14 in one run).
    const sleep = async (ms: number) => {
      const [phase, before] = [repository.routing.phase ?? 'stable', writes];
      await new Promise((r) => setTimeout(r, ms));
      const now = () => repository.routing.phase ?? 'stable';
      const stepped = () => met.has(phase) && met.has(now()) && (phase === 'frozen' || now() === 'frozen' || writes >= before + 8);
      for (let n = 0; n < 4000 && !stop && !stepped(); n++) await new Promise((r) => setTimeout(r, 5));
    };
    const done = await tool({ ratePerSecond: 1000, sleep, watcherAliveMs: 600_000, ackTimeoutMs: 600_000 }).run({ add: [{ name: 's4' }] });
    stop = true;
    await writer;
    await watcher.stop();

    expect(done.step).toBe('done');
    expect([...met]).toEqual(expect.arrayContaining(['copying', 'frozen']));
    expect(writes).toBeGreaterThan(20);
    expect(stale).toEqual([]);
    expect((await store.current())!).toMatchObject({ version: 5, spec: FIVE, move: null });
    const after = routerOf(FIVE);
    for (const [code, link] of expected) {
      const holders = [...shards.values()].filter((s) => s.rows.has(`sho.rt/${code}`));
      if (link === null) expect(holders.map((s) => s.shardName)).toEqual([]);
      else {
        expect(holders.map((s) => s.shardName)).toEqual([after.shardFor(code)]);
        expect(holders[0].rows.get(`sho.rt/${code}`)).toEqual(link);
      }
    }
    expect([...shards.values()].every((s) => s.tombstones.size === 0)).toBe(true);
    expect(done.verify!.every((f) => f.sourceRows === f.targetRows && f.sourceChecksum === f.targetChecksum)).toBe(true);
    // Verified while frozen, before links created after the switch went straight to s4.
    expect(done.verify!.map((f) => `${f.from}->${f.to}`)).toEqual(['s0->s4', 's1->s4', 's2->s4', 's3->s4']);
    expect(done.verify!.reduce((n, f) => n + f.sourceRows, 0)).toBeLessThanOrEqual(shards.get('s4')!.rows.size);
    // The work, not the machine's speed, sets the timeout: 1 500 links installed, a paced copy of ~300 at 1 000/s, eight steps
    // of the tool's 100 ms polls, and a writer beside it: ~3 s on an idle core; 120 s covers a CPU hog on both cores.
  }, 120_000);

  /** Counts the link rows each step reads from the shards (scans and look-ups by id), by the step the reporter announced. */
  function countReads(shards: Map<string, InMemoryMovableShard>) {
    const reads = { step: '', rows: {} as Record<string, number>, scans: {} as Record<string, number> };
    for (const shard of shards.values()) {
      const [scan, byIds] = [shard.scanRows.bind(shard), shard.rowsByIds.bind(shard)];
      shard.scanRows = async (afterId, limit) => {
        const rows = await scan(afterId, limit);
        reads.rows[reads.step] = (reads.rows[reads.step] ?? 0) + rows.length;
        reads.scans[reads.step] = (reads.scans[reads.step] ?? 0) + 1;
        return rows;
      };
      shard.rowsByIds = async (ids) => {
        const rows = await byIds(ids);
        reads.rows[reads.step] = (reads.rows[reads.step] ?? 0) + rows.length;
        return rows;
      };
    }
    const reporter = { step: (step: string) => void (reads.step = step), copy: () => undefined, note: () => undefined };
    return { reads, reporter };
  }

  it('the frozen step reads the links written since verify began, not every moving row', async () => {
    const { shards, repository, watcher, links, tool } = await install(3000);
    const [four, five] = [routerOf(FOUR), routerOf(FIVE)];
    const movers = links.filter((l) => four.shardFor(l.code) !== five.shardFor(l.code));
    const { reads, reporter } = countReads(shards);
    // Five edits of moving links while verify runs (the app routes with the copying phase then).
    let edited = 0;
    const s0 = shards.get('s0')!;
    const scan = s0.scanRows;
    s0.scanRows = async (afterId, limit) => {
      if (reads.step === 'verify' && edited === 0)
        for (const l of movers.slice(0, 5)) edited += Number(await repository.replace({ ...l, targetUrl: `${l.targetUrl}/during-verify`, version: 2 }, 1));
      return scan(afterId, limit);
    };
    const done = await tool({ reporter }).run({ add: [{ name: 's4' }] });
    await watcher.stop();

    expect(done.step).toBe('done');
    expect(edited).toBe(5);
    expect(movers.length).toBeGreaterThan(400);
    // verify read every row of every shard (and the moving ones twice); the frozen step scanned nothing
    // and read the five edited links on both sides, twice (repair, then the final comparison).
    expect(reads.rows.verify).toBeGreaterThan(3000);
    expect(reads.scans.frozen ?? 0).toBe(0);
    expect(reads.rows.frozen).toBe(5 * 2 * 2);
    expect(done.freeze).toMatchObject({ journaled: 5, rowsRead: 20, heldMs: expect.any(Number) });
    expect(done.verify!.map((f) => `${f.from}->${f.to}`)).toEqual(['s0->s4', 's1->s4', 's2->s4', 's3->s4']);
    expect(done.verify!.reduce((n, f) => n + f.sourceRows, 0)).toBe(5);
    for (const l of movers.slice(0, 5))
      expect(shards.get('s4')!.rows.get(`sho.rt/${l.code}`)).toMatchObject({ version: 2, targetUrl: `${l.targetUrl}/during-verify` });
    expect([...shards.values()].every((s) => s.journaled.size === 0)).toBe(true);
  });

  it('a write during verify that reached only the old owner is still caught: the frozen step repairs it from the journal', async () => {
    const { shards, repository, watcher, links, tool } = await install(1500);
    const [four, five] = [routerOf(FOUR), routerOf(FIVE)];
    const movers = links.filter((l) => four.shardFor(l.code) !== five.shardFor(l.code));
    const [edit, gone] = movers;
    const created = Array.from({ length: 400 }, (_, i) => linkNo(50_000 + i)).find((l) => four.shardFor(l.code) !== five.shardFor(l.code))!;
    const { reads, reporter } = countReads(shards);
    // Once verify compared the old owners (it reads s4 last), an app writes three moving links on
    // their old owner and dies before writing the copies: only the journal knows.
    let written = false;
    const s4 = shards.get('s4')!;
    const scan = s4.scanRows;
    s4.scanRows = async (afterId, limit) => {
      if (reads.step === 'verify' && !written) {
        written = true;
        const owner = (code: string) => shards.get(four.shardFor(code))!;
        expect(await owner(edit.code).replaceJournaled({ ...edit, targetUrl: 'https://example.com/late-edit', version: 2 }, 1)).toBe(true);
        expect(await owner(gone.code).removeJournaled(gone, 1, new Date(Date.UTC(2027, 0, 1)))).toBe(true);
        await owner(created.code).insertJournaled([created]);
      }
      return scan(afterId, limit);
    };
    // While frozen the redirects count on the new owner, also on the copy the frozen step is about to repair.
    let clicked: Promise<number | null> | null = null;
    const byIds = s4.rowsByIds;
    s4.rowsByIds = async (ids) => {
      if (reads.step === 'frozen') await (clicked ??= repository.addClicks(edit, edit.id, 3));
      return byIds(ids);
    };
    const done = await tool({ reporter }).run({ add: [{ name: 's4' }] });
    await watcher.stop();

    expect(written).toBe(true);
    expect(await clicked).toBe(3);
    expect(done.step).toBe('done');
    expect(done.freeze!.journaled).toBe(3);
    expect(done.repaired).toBeGreaterThanOrEqual(3);
    const onS4 = (code: string) => s4.rows.get(`sho.rt/${code}`) ?? null;
    expect(onS4(edit.code)).toMatchObject({ version: 2, targetUrl: 'https://example.com/late-edit' });
    expect(onS4(gone.code)).toBeNull();
    // The deleted code stays out of use on its new owner, and the clicks counted there while frozen stay with the link.
    expect(await s4.retiredUntil(gone, new Date())).toEqual(new Date(Date.UTC(2027, 0, 1)));
    expect(await s4.clickCount(edit, edit.id)).toBe(3);
    expect(onS4(created.code)).toEqual(created);
    // Cleaned up from the old owners like every other moved link.
    expect([...shards.values()].filter((s) => s.rows.has(`sho.rt/${created.code}`)).map((s) => s.shardName)).toEqual(['s4']);
  });

  it('a run stopped mid-copy and run again by another tool ends exactly like an uninterrupted run', async () => {
    const clean = await install(1200);
    await clean.tool().run({ add: [{ name: 's4' }] });
    await clean.watcher.stop();

    const crashed = await install(1200);
    let batches = 0;
    await expect(
      crashed
        .tool({
          owner: 'first',
          afterCopyBatch: () => {
            if (++batches === 5) throw new Error('SIGKILL');
          },
        })
        .run({ add: [{ name: 's4' }] }),
    ).rejects.toThrow('SIGKILL');
    const halfway = (await crashed.store.latestMove())!;
    expect(halfway).toMatchObject({ finished: false, progress: { step: 'copying' } });
    expect(halfway.progress.copied).toBeGreaterThan(0);
    expect(halfway.progress.copied).toBeLessThan(halfway.progress.plan.moving);
    // Another run cannot take the move while the first one's claim is fresh.
    await expect(crashed.tool({ owner: 'second', claimStaleMs: 60_000, claimWaitMs: 100 }).run()).rejects.toThrow(/another run/);
    const resumed = await crashed.tool({ owner: 'third', claimStaleMs: 1 }).run();
    await crashed.watcher.stop();

    expect(resumed.step).toBe('done');
    expect(contents(crashed.shards)).toEqual(contents(clean.shards));
    expect(await crashed.store.current()).toEqual(await clean.store.current());
  });

  it("carries each moving link's click count to its new owner: the count before and during the move plus the clicks after it", async () => {
    const { repository, watcher, links, tool } = await install(800);
    const [four, five] = [routerOf(FOUR), routerOf(FIVE)];
    const movers = links.filter((l) => four.shardFor(l.code) !== five.shardFor(l.code)).slice(0, 20);
    const stayer = links.find((l) => four.shardFor(l.code) === five.shardFor(l.code))!;
    for (const [i, l] of movers.entries()) await repository.addClicks(l, l.id, i + 1);
    await repository.addClicks(stayer, stayer.id, 7);
    let batches = 0;
    const done = await tool({
      afterCopyBatch: async () => {
        batches++;
        for (const l of movers) await repository.addClicks(l, l.id, 1); // counted on the old owner while it decides
      },
    }).run({ add: [{ name: 's4' }] });
    for (const l of movers) expect(await repository.addClicks(l, l.id, 1000)).toBeGreaterThan(1000); // on the new owner now
    await watcher.stop();
    expect(done.carried).toBe(20);
    expect(await Promise.all(movers.map((l) => repository.clickCount(l, l.id)))).toEqual(movers.map((_, i) => i + 1 + batches + 1000));
    expect(await repository.clickCount(stayer, stayer.id)).toBe(7);
  });

  it('removes a shard: its links go to the others and it is left empty', async () => {
    const { shards, store, watcher, tool } = await install(1000);
    const onS3 = shards.get('s3')!.rows.size;
    const done = await tool().run({ remove: ['s3'] });
    await watcher.stop();
    expect(done.plan.moving).toBe(onS3);
    expect(shards.get('s3')!.rows.size).toBe(0);
    expect((await store.current())!.spec).toEqual(ring(['s0', 's1', 's2']));
    expect([...shards.values()].reduce((n, s) => n + s.rows.size, 0)).toBe(1000);
  });

  it('aborts a move mid-copy: the old ring again, the new shard emptied, nothing lost', async () => {
    const { shards, store, watcher, tool } = await install(800);
    const before = contents(shards);
    let batches = 0;
    await expect(
      tool({
        afterCopyBatch: () => {
          if (++batches === 3) throw new Error('stop');
        },
      }).run({ add: [{ name: 's4' }] }),
    ).rejects.toThrow('stop');
    expect(shards.get('s4')!.rows.size).toBeGreaterThan(0);
    const aborted = await tool({ claimStaleMs: 1 }).abort();
    await watcher.stop();
    expect(aborted.step).toBe('aborted');
    expect(await store.current()).toMatchObject({ spec: FOUR, move: null });
    expect(contents(shards)).toEqual(before);
    await expect(tool().abort()).rejects.toThrow(/no unfinished move/);
  });

  it('waits for every live app instance to route with a new version, and stops naming the one that does not', async () => {
    const { store, watcher, tool } = await install(50);
    // In explicit steps, not against the machine's speed: the tool's clock moves only when it sleeps, each of its sleeps
    // first waits until app-1's watcher has read the newest ring (on a busy machine that read once came after the 300 ms,
    // and app-1 was named too), and stuck-1 reports version 1 before the run and at every step.
    let now = Date.now();
    const appOneRead = async () => {
      const newest = (await store.current())!.version;
      while (!(await store.watchers(60_000)).some((w) => w.instanceId === 'app-1' && w.version >= newest)) await new Promise((r) => setTimeout(r, 5));
    };
    const step = async (ms: number) => {
      await appOneRead();
      await store.heartbeat('stuck-1', 'redirect', 1);
      now += ms;
    };
    await store.heartbeat('stuck-1', 'redirect', 1);
    try {
      await expect(tool({ ackTimeoutMs: 300, clock: { now: () => now }, sleep: step }).run({ add: [{ name: 's4' }] })).rejects.toThrow(
        /older ring than version 2: stuck-1 \(redirect, v1, seen \d+ s ago\); run again/,
      );
    } finally {
      await watcher.stop();
    }
    expect((await store.latestMove())!.progress).toMatchObject({ step: 'dual_write', error: expect.stringContaining('stuck-1') });
  });

  it('jump hash: the same tool; only the last shard may leave', async () => {
    const jump = ring(['s0', 's1', 's2', 's3'], 'jump');
    expect(() => targetSpec(jump, { remove: ['s1'] })).toThrow(ShardRouterError);
    const { shards, store, watcher, tool } = await install(1000, jump);
    const added = await tool().run({ add: [{ name: 's4' }] });
    expect(Object.keys(added.plan.flows).every((f) => f.endsWith('->s4'))).toBe(true);
    expect(added.plan.moving / added.plan.examined).toBeGreaterThan(0.15);
    await expect(tool().run({ remove: ['s2'] })).rejects.toThrow(/only remove its last shard \("s4"\)/);
    await tool().run({ remove: ['s4'] });
    await watcher.stop();
    expect(shards.get('s4')!.rows.size).toBe(0);
    expect((await store.current())!.spec).toEqual(jump);
  });

  it('refuses a second move while one is unfinished, and a change that changes nothing', async () => {
    const { watcher, tool } = await install(10);
    await expect(tool().run({ add: [] })).rejects.toThrow(ReshardError);
    await expect(tool({ afterCopyBatch: () => Promise.reject(new Error('stop')) }).run({ add: [{ name: 's4' }] })).rejects.toThrow('stop');
    await expect(tool().run({ remove: ['s0'] })).rejects.toThrow(/another move is unfinished/);
    await watcher.stop();
  });
});

export type { MoveProgress };
