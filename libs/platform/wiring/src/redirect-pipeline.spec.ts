import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { ConsistentHashRing } from '@shortlink/shard-router';
import { Link, NO_OPTIONS } from '@shortlink/links-domain';
import {
  BitmapBits,
  bloomItem,
  CachePolicy,
  CacheStore,
  HotKeyDetector,
  HotLinkSnapshotKeeper,
  L1Cache,
  CacheKeys,
  LookupSource,
  RedirectObserver,
  RedirectPipeline,
  RedirectPipelineOptions,
  BloomFilter,
  SnapshotEntry,
} from '@shortlink/read-path';
import { ShardedLinkRepository } from '@shortlink/sharding-domain';
import { MemoryCacheStore } from '@shortlink/cache';
import { SqliteLinkShardStore } from '@shortlink/link-store';
import { BloomMaintainer } from '@shortlink/read-path';

/** The composed read path on the embedded adapters (SQLite shards, in-process cache). */
class CountingObserver implements RedirectObserver {
  lookups: LookupSource[] = [];
  dbQueries = 0;
  states: string[] = [];
  lookup(s: LookupSource) {
    this.lookups.push(s);
  }
  dbQuery() {
    this.dbQueries++;
  }
  lockWait() {}
  redisBreakerState(s: string) {
    this.states.push(s);
  }
}

/** A cache store that can be switched off, like a Redis outage. */
class SwitchableStore implements CacheStore {
  down = false;
  constructor(private readonly inner: CacheStore) {}
  private guard<T>(op: () => Promise<T>): Promise<T> {
    return this.down ? Promise.reject(new Error('ECONNREFUSED')) : op();
  }
  get = (k: string) => this.guard(() => this.inner.get(k));
  set = (k: string, v: string, t?: number) => this.guard(() => this.inner.set(k, v, t));
  del = (k: readonly string[]) => this.guard(() => this.inner.del(k));
  pttl = (k: string) => this.guard(() => this.inner.pttl(k));
  setIfAbsent = (k: string, v: string, t: number) => this.guard(() => this.inner.setIfAbsent(k, v, t));
  deleteIfEquals = (k: string, v: string) => this.guard(() => this.inner.deleteIfEquals(k, v));
  incrBy = (k: string, d: number, t: number) => this.guard(() => this.inner.incrBy(k, d, t));
  setIfNewer = (k: string, v: string, version: number, t?: number) => this.guard(() => this.inner.setIfNewer(k, v, version, t));
  incrementBelow = (k: string, limit: number, initial: number) => this.guard(() => this.inner.incrementBelow(k, limit, initial));
  setBits = (k: string, o: readonly number[]) => this.guard(() => this.inner.setBits(k, o));
  getBits = (k: string, o: readonly number[]) => this.guard(() => this.inner.getBits(k, o));
  countBits = (k: string, s: number, e: number) => this.guard(() => this.inner.countBits(k, s, e));
  dropNullsAndSetBits = (k: readonly string[], b: readonly BitmapBits[]) => this.guard(() => this.inner.dropNullsAndSetBits(k, b));
  ping = () => this.guard(() => this.inner.ping());
  close = () => this.inner.close();
}

const DOMAIN = 'sho.rt';
const link = (code: string, over: Partial<Link> = {}): Link => ({
  ...NO_OPTIONS,
  id: String(Math.floor(Math.random() * 1e12)),
  domain: DOMAIN,
  code,
  targetUrl: `https://example.com/${code}`,
  tenantId: 't1',
  createdAt: new Date(1_700_000_000_000),
  updatedAt: new Date(1_700_000_000_000),
  expiresAt: null,
  status: 'active',
  redirectType: 302,
  version: 1,
  moderation: 'clear',
  moderationReason: null,
  ...over,
});

const OPTIONS: RedirectPipelineOptions = {
  l1Enabled: true,
  sharedCacheEnabled: true,
  bloomEnabled: true,
  lockTtlMs: 2000,
  lockWaitMs: 2000,
  lockPollMs: 5,
  dbConcurrency: 4,
  dbQueue: { max: 100, waitMs: 1000 },
  redisBreakerFailures: 3,
  redisBreakerHalfOpenAfterMs: 200,
  nullTtlMs: 60_000,
};

describe('RedirectPipeline on the embedded adapters', () => {
  let dir: string;
  let shards: SqliteLinkShardStore[];
  let repo: ShardedLinkRepository;
  let store: SwitchableStore;
  let bloom: BloomFilter;
  let snapshotEntries: SnapshotEntry[];

  const build = (
    over: Partial<RedirectPipelineOptions> = {},
    policy = new CachePolicy('lru'),
    hot = new HotKeyDetector(),
    snapshot?: HotLinkSnapshotKeeper,
    clock?: { now(): number },
  ) => {
    const observer = new CountingObserver();
    const keeper = snapshot ?? new HotLinkSnapshotKeeper({ load: async () => snapshotEntries, save: async (e) => void (snapshotEntries = [...e]) });
    const l1 = new L1Cache({ maxEntries: 1000, maxBytes: 1 << 20, ttlMs: 60_000, negativeTtlMs: 5_000 });
    const pipeline = new RedirectPipeline({ cache: store, links: repo, l1, hot, policy, bloom, snapshot: keeper, observer, clock }, { ...OPTIONS, ...over });
    return { pipeline, observer, keeper };
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'shortlink-pipeline-'));
    shards = ['s0', 's1'].map((n) => new SqliteLinkShardStore(n, join(dir, `${n}.sqlite`)));
    repo = new ShardedLinkRepository(new ConsistentHashRing(shards.map((s) => ({ name: s.shardName }))), shards);
    store = new SwitchableStore(new MemoryCacheStore(10_000));
    bloom = new BloomFilter(store, { capacity: 10_000, falsePositiveRate: 0.01, partitions: 4, refreshMs: 250 });
    snapshotEntries = [];
    const stored = [link('hot1234'), link('cold123'), link('gone123', { status: 'disabled' }), link('old1234', { expiresAt: new Date(1000) })];
    await repo.insertInStatements(stored, 1000);
    await new BloomMaintainer(bloom, store, repo).rebuild();
    await bloom.follow();
  });

  afterEach(async () => {
    bloom.stop();
    for (const s of shards) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a cold link from the shard once, then from L1, with the maximum TTL (less up to a tenth) in Redis under the lru policy', async () => {
    const { pipeline, observer } = build();
    expect((await pipeline.resolve({ domain: DOMAIN, code: 'hot1234' })).source).toBe('db');
    expect((await pipeline.resolve({ domain: DOMAIN, code: 'hot1234' })).source).toBe('l1');
    expect(observer.dbQueries).toBe(1);
    // The last net under a lost invalidation (docs/design.md, "Keys in the shared cache"): CACHE_MAX_TTL_SECONDS, 1 h.
    const ttl = await store.pttl(CacheKeys.link({ domain: DOMAIN, code: 'hot1234' }));
    expect(ttl).toBeGreaterThan(3_240_000 - 2000);
    expect(ttl).toBeLessThanOrEqual(3_600_000 + 100);
  });

  it('makes one shard query for 500 concurrent misses in one instance (single flight)', async () => {
    const { pipeline, observer } = build();
    const results = await Promise.all(Array.from({ length: 500 }, () => pipeline.resolve({ domain: DOMAIN, code: 'cold123' })));
    expect(results.every((r) => r.link.targetUrl === 'https://example.com/cold123')).toBe(true);
    expect(observer.dbQueries).toBe(1);
  });

  it('makes one shard query for concurrent misses on two instances sharing the store (lock + double check)', async () => {
    const a = build();
    const b = build();
    await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).pipeline.resolve({ domain: DOMAIN, code: 'cold123' })));
    expect(a.observer.dbQueries + b.observer.dbQueries).toBe(1);
  });

  it('rejects codes the Bloom filter has never seen without touching the shard', async () => {
    // The layout's freshness on a clock that stands still: this test is about the filter's "no", not about a layout going
    // stale. On the real clock a refresh timer late by 750 ms (under a CPU hog on both cores) made the layout stale, and the
    // filter rightly answered "unknown" (14 shard queries, 10 allowed); a stale layout is bloom-growth.spec.ts's subject.
    bloom.stop();
    bloom = new BloomFilter(store, { capacity: 10_000, falsePositiveRate: 0.01, partitions: 4, refreshMs: 250 }, () => 0);
    await bloom.follow();
    const { pipeline, observer } = build();
    const codes = Array.from({ length: 500 }, (_, i) => `none${String(i).padStart(3, '0')}`);
    for (const code of codes) await expect(pipeline.resolve({ domain: DOMAIN, code })).rejects.toMatchObject({ code: 'LINK_NOT_FOUND' });
    expect(observer.dbQueries).toBeLessThanOrEqual(10);
    expect(observer.lookups.filter((s) => s === 'bloom_reject').length).toBeGreaterThanOrEqual(490);
  });

  it('caches a miss that passed the Bloom filter as a null value for 60 s', async () => {
    const { pipeline } = build({ bloomEnabled: false });
    await expect(pipeline.resolve({ domain: DOMAIN, code: 'nope123' })).rejects.toMatchObject({ code: 'LINK_NOT_FOUND' });
    expect(await store.get(CacheKeys.link({ domain: DOMAIN, code: 'nope123' }))).toBe('');
    const ttl = await store.pttl(CacheKeys.link({ domain: DOMAIN, code: 'nope123' }));
    expect(ttl).toBeGreaterThan(55_000);
    const fresh = build({ l1Enabled: false, bloomEnabled: false });
    await expect(fresh.pipeline.resolve({ domain: DOMAIN, code: 'nope123' })).rejects.toMatchObject({
      details: expect.objectContaining({ source: 'redis_null' }),
    });
    expect(fresh.observer.dbQueries).toBe(0);
  });

  it('reports disabled links as not found and expired ones as gone', async () => {
    const { pipeline } = build();
    await expect(pipeline.resolve({ domain: DOMAIN, code: 'gone123' })).rejects.toMatchObject({ code: 'LINK_DISABLED' });
    await expect(pipeline.resolve({ domain: DOMAIN, code: 'old1234' })).rejects.toMatchObject({ code: 'LINK_EXPIRED' });
  });

  it('caps the cache TTL of an expiring link at its expiry plus the null TTL, under either policy', async () => {
    // The pipeline and the cache on one stopped clock: the TTL read back is the one written, however busy the machine.
    const NOW = Date.now();
    const stopped = { now: () => NOW };
    store = new SwitchableStore(new MemoryCacheStore(10_000, stopped));
    const expiresAt = NOW + 120_000;
    await repo.insertInStatements([link('soon123', { expiresAt: new Date(expiresAt) })], 1000);
    await bloom.add(bloomItem(DOMAIN, 'soon123'));
    const key = CacheKeys.link({ domain: DOMAIN, code: 'soon123' });
    for (const policy of [new CachePolicy('lru'), new CachePolicy('ttl')]) {
      await store.del([key]);
      const { pipeline } = build({ l1Enabled: false }, policy, undefined, undefined, stopped);
      expect((await pipeline.resolve({ domain: DOMAIN, code: 'soon123' })).source).toBe('db');
      expect(await store.pttl(key)).toBe(expiresAt - NOW + OPTIONS.nullTtlMs);
    }
    // Already expired: cached for the null TTL only, still answering 410.
    const { pipeline } = build({ l1Enabled: false }, undefined, undefined, undefined, stopped);
    await expect(pipeline.resolve({ domain: DOMAIN, code: 'old1234' })).rejects.toMatchObject({ code: 'LINK_EXPIRED' });
    expect(await store.pttl(CacheKeys.link({ domain: DOMAIN, code: 'old1234' }))).toBe(OPTIONS.nullTtlMs);
  });

  it('writes the TTL policy: base + jitter normally, the long TTL once the key is hot (with a maximum above it)', async () => {
    const hot = new HotKeyDetector({ windowSeconds: 60, bucketSeconds: 10, threshold: 50, maxTrackedKeys: 100 });
    const { pipeline } = build({ l1Enabled: false }, new CachePolicy('ttl', { maxTtlMs: 10_000_000 }), hot);
    const key = CacheKeys.link({ domain: DOMAIN, code: 'hot1234' });
    await pipeline.resolve({ domain: DOMAIN, code: 'hot1234' });
    const first = await store.pttl(key);
    expect(first).toBeGreaterThanOrEqual(1800_000 - 1000);
    expect(first).toBeLessThan(2100_000);
    for (let i = 0; i < 50; i++) await pipeline.resolve({ domain: DOMAIN, code: 'hot1234' });
    await store.del([key]);
    await pipeline.resolve({ domain: DOMAIN, code: 'hot1234' });
    const long = await store.pttl(key);
    expect(long).toBeGreaterThanOrEqual(7200_000 - 1000);
    expect(long).toBeLessThan(7800_000);
  });

  it('falls back to the shard when the cache store is down, opens the Redis breaker, and closes it when it is back', async () => {
    const { pipeline, observer } = build({ l1Enabled: false });
    store.down = true;
    for (let i = 0; i < 5; i++) expect((await pipeline.resolve({ domain: DOMAIN, code: 'hot1234' })).link.targetUrl).toBe('https://example.com/hot1234');
    expect(pipeline.redisBreakerState).toBe('open');
    store.down = false;
    await new Promise((r) => setTimeout(r, 250));
    await pipeline.resolve({ domain: DOMAIN, code: 'hot1234' });
    expect(pipeline.redisBreakerState).toBe('closed');
    expect(observer.states).toEqual(expect.arrayContaining(['open', 'closed']));
  });

  it('serves a burst of distinct codes beyond the database concurrency limit by waiting for permits, not refusing (a cold cache)', async () => {
    store.down = true;
    const many = Array.from({ length: 40 }, (_, i) => link(`burst${String(i).padStart(2, '0')}`));
    await repo.insertInStatements(many, 1000);
    repo = new ShardedLinkRepository(new ConsistentHashRing(shards.map((s) => ({ name: s.shardName }))), shards, {
      redirectLookupsPerShard: 1,
      redirectLookupQueue: { max: 100, waitMs: 1000 },
    });
    let running = 0;
    let most = 0;
    for (const shard of shards) {
      const find = shard.findByCode.bind(shard);
      shard.findByCode = async (...args) => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 2));
        return find(...args).finally(() => running--);
      };
    }
    const { pipeline, observer } = build({ l1Enabled: false, dbConcurrency: 2 });
    // On the fake clock: the 20 look-ups a shard queues take 40 ms of it, within the queue's 1 s wait
    // however slowly a loaded machine runs them.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    let outcomes: Awaited<ReturnType<typeof pipeline.resolve>>[] | undefined;
    try {
      const all = Promise.all(many.map((l) => pipeline.resolve({ domain: DOMAIN, code: l.code })));
      void all.then(
        (o) => (outcomes = o),
        () => undefined,
      );
      for (let ms = 0; !outcomes && ms < 2000; ms++) {
        await new Promise((r) => setImmediate(r));
        if (!outcomes) await jest.advanceTimersByTimeAsync(1);
      }
      outcomes = await all;
    } finally {
      jest.useRealTimers();
    }
    expect(outcomes.map((o) => [o.link.targetUrl, o.source])).toEqual(many.map((l) => [l.targetUrl, 'db']));
    expect(observer.dbQueries).toBe(40);
    expect(most).toBe(2); // one per shard at once
  });

  it('refuses with 503 DEPENDENCY_UNAVAILABLE beyond the database concurrency limit when nothing may wait (DB_QUEUE_MAX=0)', async () => {
    store.down = true;
    const many = Array.from({ length: 40 }, (_, i) => link(`burst${String(i).padStart(2, '0')}`));
    await repo.insertInStatements(many, 1000);
    const { pipeline } = build({ l1Enabled: false, dbConcurrency: 2, dbQueue: { max: 0, waitMs: 1000 } });
    const outcomes = await Promise.allSettled(many.map((l) => pipeline.resolve({ domain: DOMAIN, code: l.code })));
    const rejected = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.every((r) => r.reason.code === 'DEPENDENCY_UNAVAILABLE')).toBe(true);
  });

  it('serves hot links from the snapshot when cache and shards are both down', async () => {
    const hot = new HotKeyDetector({ windowSeconds: 60, bucketSeconds: 10, threshold: 3, maxTrackedKeys: 100 });
    const first = build({}, new CachePolicy('lru'), hot);
    for (let i = 0; i < 5; i++) await first.pipeline.resolve({ domain: DOMAIN, code: 'hot1234' });
    await first.keeper.refresh(first.pipeline.hotLinks(), 100);
    expect(snapshotEntries.map((e) => e.key)).toEqual([CacheKeys.link({ domain: DOMAIN, code: 'hot1234' })]);

    store.down = true;
    for (const s of shards) await s.close();
    const restarted = build();
    await restarted.keeper.load();
    expect((await restarted.pipeline.resolve({ domain: DOMAIN, code: 'hot1234' })).source).toBe('snapshot');
    await expect(restarted.pipeline.resolve({ domain: DOMAIN, code: 'cold123' })).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE' });
  });

  describe('edits (docs/design.md, "Edits reach every instance")', () => {
    const id = { domain: DOMAIN, code: 'hot1234' };
    const key = CacheKeys.link(id);
    /** The shared cache holds version 2 with a new target, as the generation app writes it before publishing. */
    const edit = async () => {
      const v1 = JSON.parse((await store.get(key))!);
      await store.setIfNewer(key, JSON.stringify({ ...v1, targetUrl: 'https://example.com/edited', version: 2 }), 2);
    };

    /** A lookup that has read Redis and is held there until `release()`; reads after it are not held. */
    const slowLookup = async (pipeline: RedirectPipeline) => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const get = store.get;
      store.get = async (k: string) => {
        const value = await get(k);
        await gate;
        return value;
      };
      const slow = pipeline.resolve(id);
      await new Promise((r) => setImmediate(r));
      store.get = get;
      return { slow, release };
    };

    it('drops a link from L1 on a change, pinned hot keys included', async () => {
      const hot = new HotKeyDetector({ windowSeconds: 60, bucketSeconds: 10, threshold: 2, maxTrackedKeys: 100 });
      const { pipeline } = build({}, new CachePolicy('lru'), hot);
      for (let i = 0; i < 4; i++) await pipeline.resolve(id);
      expect(pipeline.hotLinks().map((h) => h.link?.targetUrl)).toEqual(['https://example.com/hot1234']); // pinned
      await edit();
      expect(pipeline.resolveLocal(id)?.link.targetUrl).toBe('https://example.com/hot1234');
      pipeline.applyChange({ ...id, version: 2 });
      expect(pipeline.resolveLocal(id)).toBeUndefined();
      expect((await pipeline.resolve(id)).link.targetUrl).toBe('https://example.com/edited');
      expect(pipeline.resolveLocal(id)?.link.targetUrl).toBe('https://example.com/edited');
    });

    it('keeps a lookup that read the old value before the change from putting it into L1 after it', async () => {
      const { pipeline } = build();
      await pipeline.resolve(id); // version 1 in Redis and L1
      pipeline.applyChange({ ...id, version: 1 }); // e.g. an earlier change: L1 empty again
      // A lookup reads version 1 from Redis; the edit and its change land before the lookup ends.
      const { slow, release } = await slowLookup(pipeline);
      await edit();
      pipeline.applyChange({ ...id, version: 2 });
      const fresh = pipeline.resolve(id); // after the change: not joined to the slow lookup
      release();
      expect((await slow).link.targetUrl).toBe('https://example.com/hot1234'); // it began before the change
      expect((await fresh).link.targetUrl).toBe('https://example.com/edited');
      expect(pipeline.resolveLocal(id)?.link.targetUrl).toBe('https://example.com/edited');
    });

    it('drops every link from L1 when the channel was interrupted, and lookups begun before it store nothing', async () => {
      const { pipeline } = build();
      await pipeline.resolve(id);
      await pipeline.resolve({ domain: DOMAIN, code: 'cold123' });
      pipeline.applyChange({ ...id, version: 1 });
      const { slow, release } = await slowLookup(pipeline);
      pipeline.dropLocalLinks();
      expect(pipeline.resolveLocal({ domain: DOMAIN, code: 'cold123' })).toBeUndefined();
      release();
      await slow;
      expect(pipeline.resolveLocal(id)).toBeUndefined();
      await pipeline.resolve(id);
      expect(pipeline.resolveLocal(id)?.link.targetUrl).toBe('https://example.com/hot1234');
    });
  });

  it('lets a hung shard hold only its share of the database permits: lookups on the other shard go on, and those the share refused are no queries (docs/design.md, "Failure containment")', async () => {
    repo = new ShardedLinkRepository(new ConsistentHashRing(shards.map((s) => ({ name: s.shardName }))), shards, { redirectLookupsPerShard: 2 });
    const { pipeline, observer } = build({ sharedCacheEnabled: false, l1Enabled: false, dbConcurrency: 8 }); // a quarter each: 2
    const codesOn = (shard: string, n: number) => {
      const out: string[] = [];
      for (let i = 0; out.length < n; i++) if (repo.shardNameFor(`c${i}abcde`) === shard) out.push(`c${i}abcde`);
      return out;
    };
    const [hungName, otherName] = shards.map((s) => s.shardName);
    shards[0].findByCode = () => new Promise(() => undefined);
    const [a, b, c] = codesOn(hungName, 3);
    void pipeline.resolve({ domain: DOMAIN, code: a }).catch(() => undefined);
    void pipeline.resolve({ domain: DOMAIN, code: b }).catch(() => undefined);
    await expect(pipeline.resolve({ domain: DOMAIN, code: c })).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE', details: { shard: hungName } });
    expect(observer.dbQueries).toBe(2);
    const [elsewhere] = codesOn(otherName, 1);
    await repo.insert(link(elsewhere));
    expect((await pipeline.resolve({ domain: DOMAIN, code: elsewhere })).source).toBe('db');
    expect(observer.dbQueries).toBe(3);
  });

  it('lets the lookups of a hung shard wait in its own queue for DB_QUEUE_WAIT_MS, then refuses them, while the other shard serves at once', async () => {
    repo = new ShardedLinkRepository(new ConsistentHashRing(shards.map((s) => ({ name: s.shardName }))), shards, {
      redirectLookupsPerShard: 1,
      redirectLookupQueue: { max: 10, waitMs: 150 },
    });
    const { pipeline } = build({ sharedCacheEnabled: false, l1Enabled: false, dbConcurrency: 2 });
    const codesOn = (shard: string, n: number) => {
      const out: string[] = [];
      for (let i = 0; out.length < n; i++) if (repo.shardNameFor(`h${i}abcde`) === shard) out.push(`h${i}abcde`);
      return out;
    };
    const [hungName, otherName] = shards.map((s) => s.shardName);
    shards[0].findByCode = () => new Promise(() => undefined);
    const [a, b] = codesOn(hungName, 2);
    void pipeline.resolve({ domain: DOMAIN, code: a }).catch(() => undefined);
    const waited = pipeline.resolve({ domain: DOMAIN, code: b });
    const started = Date.now();
    const [elsewhere] = codesOn(otherName, 1);
    await repo.insert(link(elsewhere));
    expect((await pipeline.resolve({ domain: DOMAIN, code: elsewhere })).source).toBe('db');
    await expect(waited).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE', details: { shard: hungName } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });
});
