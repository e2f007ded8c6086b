import { NO_OPTIONS } from '@shortlink/links-domain';
import { ShardedLinkRepository } from './sharded-link-repository';
import { InMemoryMovableShard, InMemoryRingStore } from './testing/in-memory-resharding';
import { RingSpec } from './ring';
import { RingWatcher } from './ring-watcher';
import { RoutingState } from './routing-state';

const spec = (names: string[]): RingSpec => ({ strategy: 'ring', virtualNodes: 150, shards: names.map((name) => ({ name })) });
const FOUR = spec(['s0', 's1', 's2', 's3']);

function setup(options: { known?: string[]; leaseMs?: number } = {}) {
  const shards = (options.known ?? ['s0', 's1', 's2', 's3', 's4']).map((n) => new InMemoryMovableShard(n));
  const store = new InMemoryRingStore();
  const repository = new ShardedLinkRepository(new RoutingState({ version: 0, spec: FOUR, move: null }), shards.slice(0, 4), {
    resolveStore: (n) => shards.find((s) => s.shardName === n) ?? null,
  });
  const now = { t: 1_000_000 };
  const logs: string[] = [];
  const watcher = new RingWatcher(store, repository, {
    instanceId: 'i-1',
    app: 'redirect',
    pollMs: 60_000,
    leaseMs: options.leaseMs ?? 10_000,
    bootstrap: FOUR,
    clock: { now: () => now.t },
    log: (l, m) => logs.push(`${l}: ${m}`),
  });
  return { shards, store, repository, watcher, now, logs };
}

describe('RingWatcher', () => {
  it('writes the configured ring as version 1 when the store has none, and reports it', async () => {
    const { store, repository, watcher } = setup();
    await watcher.poll();
    expect(await store.current()).toEqual({ version: 1, spec: FOUR, move: null });
    expect(repository.routing.version).toBe(1);
    expect((await store.watchers(60_000)).map((w) => [w.instanceId, w.app, w.version])).toEqual([['i-1', 'redirect', 1]]);
    await watcher.stop();
    expect(await store.watchers(60_000)).toEqual([]);
  });

  it('routes with a newer version at the next read, and reports it only once the operations of the old one are done', async () => {
    const { store, repository, watcher } = setup();
    await watcher.poll();
    const old = repository.routing;
    old.enter(); // an operation that started under version 1 is still running
    await store.publish({ version: 2, spec: FOUR, move: { id: 'm', phase: 'dual_write', to: spec(['s0', 's1', 's2', 's3', 's4']) } }, 1);
    const polled = watcher.poll();
    await new Promise((r) => setTimeout(r, 20));
    expect(repository.routing.version).toBe(2); // new operations use version 2 at once
    expect((await store.watchers(60_000))[0].version).toBe(1); // but it still reports 1
    old.leave();
    await polled;
    expect((await store.watchers(60_000))[0].version).toBe(2);
    await watcher.stop();
  });

  it('stays on its version, and says why, when a new one names a shard it has no address for', async () => {
    const { store, repository, watcher, logs } = setup({ known: ['s0', 's1', 's2', 's3'] });
    await watcher.poll();
    await store.publish({ version: 2, spec: spec(['s0', 's1', 's2', 's3', 's9']), move: null }, 1);
    await watcher.poll();
    expect(repository.routing.version).toBe(1);
    expect(watcher.status().refused).toEqual({ version: 2, reason: expect.stringContaining('"s9"') });
    expect(logs.some((l) => l.startsWith('error: cannot route with shard ring version 2'))).toBe(true);
    expect((await store.watchers(60_000))[0].version).toBe(1);
    await watcher.stop();
  });

  it('holds a lease from each read: writes stop once the ring could not be read for leaseMs, and start again with the next read', async () => {
    const { store, repository, watcher, now } = setup({ leaseMs: 5000 });
    const link = {
      ...NO_OPTIONS,
      id: '1',
      domain: 'sho.rt',
      code: 'abc1234',
      targetUrl: 'https://example.com/',
      tenantId: 't',
      createdAt: new Date(0),
      updatedAt: new Date(0),
      expiresAt: null,
      status: 'active' as const,
      redirectType: 302 as const,
      version: 1,
      moderation: 'clear' as const,
      moderationReason: null,
    };
    await expect(repository.insert(link)).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE', details: { reason: 'ring-unknown' } }); // never read yet
    await watcher.poll();
    await repository.insert(link);
    store.current = () => Promise.reject(new Error('ECONNREFUSED meta'));
    now.t += 4000;
    await watcher.poll();
    expect(watcher.valid()).toBe(true); // 4 s since the last good read
    now.t += 1500;
    expect(watcher.valid()).toBe(false);
    expect(watcher.describe()).toBe('the shard ring could not be read for 6 s (ECONNREFUSED meta)');
    await expect(repository.insert({ ...link, id: '2', code: 'abc1235' })).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE' });
    delete (store as { current?: unknown }).current;
    await watcher.poll();
    await repository.insert({ ...link, id: '2', code: 'abc1235' });
    await watcher.stop();
  });

  it('reads the ring every movePollMs while a move is under way, and every pollMs again once it is done', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const { store, repository } = setup();
      const watcher = new RingWatcher(store, repository, {
        instanceId: 'i-2',
        app: 'redirect',
        pollMs: 2000,
        movePollMs: 50,
        leaseMs: 10_000,
        bootstrap: FOUR,
      });
      await watcher.start();
      expect([repository.routing.version, watcher.nextPollMs()]).toEqual([1, 2000]);
      await store.publish({ version: 2, spec: FOUR, move: { id: 'm', phase: 'dual_write', to: spec(['s0', 's1', 's2', 's3', 's4']) } }, 1);
      await jest.advanceTimersByTimeAsync(2000); // seen at the stable pace
      expect([repository.routing.version, watcher.nextPollMs()]).toEqual([2, 50]);
      await store.publish({ version: 3, spec: FOUR, move: { id: 'm', phase: 'frozen', to: spec(['s0', 's1', 's2', 's3', 's4']) } }, 2);
      await jest.advanceTimersByTimeAsync(50); // the next version of the move within movePollMs
      expect(repository.routing.version).toBe(3);
      await store.publish({ version: 4, spec: spec(['s0', 's1', 's2', 's3', 's4']), move: null }, 3);
      await jest.advanceTimersByTimeAsync(50);
      expect([repository.routing.version, watcher.nextPollMs()]).toEqual([4, 2000]);
      await store.publish({ version: 5, spec: FOUR, move: { id: 'n', phase: 'dual_write', to: FOUR } }, 4);
      await jest.advanceTimersByTimeAsync(1000);
      expect(repository.routing.version).toBe(4); // back at the stable pace
      await jest.advanceTimersByTimeAsync(1000);
      expect(repository.routing.version).toBe(5);
      await watcher.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
