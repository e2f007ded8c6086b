import { join } from 'path';
import { AppConfig } from '@shortlink/config';
import { HealthProbe } from '@shortlink/core';
import { createShardRouter } from '@shortlink/shard-router';
import {
  CachePolicy, CacheStore, NULL_TTL_MS, HashCodeStrategy, HotKeyDetector, HotLinkSnapshotKeeper, L1Cache, LinkCache, LinkService, LinkShardStore,
  RedirectObserver, RedirectPipeline, RedisBloomFilter, SegmentIdAllocator, SequenceCodeStrategy, SequenceStore, ShardedLinkRepository,
  TenantService, TenantStore,
} from '@shortlink/links-domain';
import { BloomMaintainer } from './bloom-maintainer';
import { resolveSecret } from './secrets';
import { ClickAggregateStore, ClickEventSink, ClickEventSource } from '@shortlink/clicks-domain';
import { LazyMysqlLinkShardStore, LazyMysqlMetaStore, SqliteLinkShardStore, SqliteMetaStore } from '@shortlink/link-store';
import { FileSnapshotStore, MemoryCacheStore, RedisClusterStore } from '@shortlink/cache';
import { createClickBus, ClickBus } from './click-bus.factory';
import { ChdbExecutor, ClickHouseExecutor, SqlClickAggregateStore } from '@shortlink/olap';

type MetaStore = TenantStore & SequenceStore & { ping(): Promise<void>; close(): Promise<void> };

/**
 * The adapters of one process, chosen by config at boot and created on first use, so that an
 * app only opens what it needs (redirect never loads chdb). In the embedded profile the three
 * apps share one Infrastructure: one cache, one in-process bus, one set of SQLite files.
 */
export class Infrastructure {
  private readonly once = new Map<string, Promise<unknown>>();
  private readonly closers: Array<() => Promise<void>> = [];
  private readonly probes = new Map<string, HealthProbe>();

  constructor(readonly config: AppConfig) {}

  private lazy<T>(name: string, create: () => Promise<T>, close?: (value: T) => Promise<void>): Promise<T> {
    let p = this.once.get(name) as Promise<T> | undefined;
    if (!p) {
      p = create().then((value) => {
        if (close) this.closers.push(() => close(value));
        return value;
      });
      p.catch(() => this.once.delete(name)); // a failed open may be retried by the next caller
      this.once.set(name, p);
    }
    return p;
  }

  meta(): Promise<MetaStore> {
    const db = this.config.db;
    return this.lazy(
      'meta',
      async () => {
        const store: MetaStore = db.driver === 'mysql'
          ? new LazyMysqlMetaStore({ url: db.metaUrl, poolSize: db.poolSize })
          : new SqliteMetaStore(join(this.config.runtime.dataDir, 'meta.sqlite'));
        this.probes.set('meta-db', { name: 'meta-db', check: () => store.ping() });
        return store;
      },
      (s) => s.close(),
    );
  }

  linkRepository(): Promise<ShardedLinkRepository> {
    const db = this.config.db;
    return this.lazy('links', async () => {
      const stores: LinkShardStore[] = db.driver === 'mysql'
        ? db.shards.map((s) => new LazyMysqlLinkShardStore(s.name, { url: s.url, poolSize: db.poolSize }))
        : db.shards.map((name) => new SqliteLinkShardStore(name, join(this.config.runtime.dataDir, 'shards', `${name}.sqlite`)));
      for (const s of stores) {
        this.closers.push(() => s.close());
        this.probes.set(`shard-${s.shardName}`, { name: `shard-${s.shardName}`, check: () => s.ping() });
      }
      const router = createShardRouter(db.strategy, stores.map((s) => ({ name: s.shardName })), db.virtualNodes);
      return new ShardedLinkRepository(router, stores);
    });
  }

  cacheStore(): Promise<CacheStore> {
    const cache = this.config.cache;
    return this.lazy(
      'cache',
      async () => {
        const store = cache.driver === 'redis' ? new RedisClusterStore({ nodes: cache.nodes, writeBatching: cache.writeBatching, commandTimeoutMs: cache.commandTimeoutMs }) : new MemoryCacheStore(cache.maxEntries);
        this.probes.set('cache', { name: 'cache', check: () => store.ping() });
        return store;
      },
      (s) => s.close(),
    );
  }

  async linkCache(): Promise<LinkCache> {
    return new LinkCache(await this.cacheStore());
  }

  linkService(): Promise<LinkService> {
    return this.lazy('link-service', async () => {
      const links = this.config.links;
      const ids = new SegmentIdAllocator(await this.meta(), 'links', links.idBlockSize);
      const codes = links.codeStrategy === 'hash' ? new HashCodeStrategy() : new SequenceCodeStrategy(resolveSecret(this.config.secrets.code));
      const bloom = await this.bloomMaintainer();
      return new LinkService(await this.linkRepository(), ids, codes, await this.linkCache(), { defaultDomain: links.defaultDomain, shortDomains: links.domains }, undefined, [
        (link) => bloom.added(link),
      ]);
    });
  }

  /** The Bloom filter of existing links and the job that keeps it complete. */
  bloomMaintainer(): Promise<BloomMaintainer> {
    const b = this.config.redirect.bloom;
    return this.lazy(
      'bloom',
      async () => {
        const filter = new RedisBloomFilter(await this.cacheStore(), { capacity: b.capacity, falsePositiveRate: b.falsePositiveRate, partitions: b.partitions });
        return new BloomMaintainer(filter, await this.cacheStore(), await this.linkRepository());
      },
      (m) => m.close(),
    );
  }

  /** One pipeline per redirect app instance (its L1, hot-key detector and snapshot are local). */
  async redirectPipeline(observer?: RedirectObserver): Promise<{ pipeline: RedirectPipeline; snapshot: HotLinkSnapshotKeeper; bloom: BloomMaintainer }> {
    const r = this.config.redirect;
    const bloom = await this.bloomMaintainer();
    const snapshot = new HotLinkSnapshotKeeper(new FileSnapshotStore(r.snapshot.file));
    await snapshot.load();
    const pipeline = new RedirectPipeline(
      await this.cacheStore(),
      await this.linkRepository(),
      new L1Cache(r.l1),
      new HotKeyDetector(r.hot),
      new CachePolicy(r.policy),
      r.bloom.enabled ? bloom.filter : null,
      snapshot,
      {
        l1Enabled: r.l1.enabled,
        redisEnabled: r.redisEnabled,
        bloomEnabled: r.bloom.enabled,
        lockTtlMs: r.lock.ttlMs,
        lockWaitMs: r.lock.waitMs,
        lockPollMs: r.lock.pollMs,
        dbConcurrency: r.dbConcurrency,
        breakerFailures: r.breaker.failures,
        breakerHalfOpenAfterMs: r.breaker.halfOpenAfterMs,
        nullTtlMs: NULL_TTL_MS,
      },
      observer,
    );
    return { pipeline, snapshot, bloom };
  }

  /** Key of the visitor hash (given, or kept in the data directory on the embedded profile). */
  visitorSecret(): string {
    return resolveSecret(this.config.secrets.visitor);
  }

  async tenantService(): Promise<TenantService> {
    return new TenantService(await this.meta());
  }

  private bus(): Promise<ClickBus> {
    return this.lazy('bus', async () => createClickBus(this.config), (b) => b.close());
  }

  async clickSink(): Promise<ClickEventSink> {
    return (await this.bus()).sink();
  }

  async clickSource(): Promise<ClickEventSource> {
    return (await this.bus()).source();
  }

  clickAggregates(): Promise<ClickAggregateStore> {
    const olap = this.config.olap;
    return this.lazy(
      'olap',
      async () => {
        const executor = olap.driver === 'clickhouse'
          ? new ClickHouseExecutor({ url: olap.url, username: olap.username, password: olap.password })
          : new ChdbExecutor(join(this.config.runtime.dataDir, 'chdb'));
        const store = new SqlClickAggregateStore(executor, olap.database);
        await store.migrate();
        this.probes.set('olap', { name: 'olap', check: () => store.ping() });
        return store;
      },
      (s) => s.close(),
    );
  }

  /** Probes of the dependencies opened so far in this process. */
  healthProbes(names?: readonly string[]): HealthProbe[] {
    const all = [...this.probes.values()];
    return names ? all.filter((p) => names.some((n) => p.name === n || p.name.startsWith(n))) : all;
  }

  async close(): Promise<void> {
    const closers = this.closers.splice(0).reverse();
    for (const close of closers) await close().catch(() => undefined);
    this.once.clear();
  }
}
