import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { loadConfig } from '@shortlink/config';
import { CODE_SECRET, LINK_REPOSITORY, SEQUENCE_STORE } from '@shortlink/links-domain';
import { VISITOR_WINDOW_STORE } from '@shortlink/redirect-rules';
import { CACHE_STORE, CLICK_LEASE_STORE, SNAPSHOT_STORE } from '@shortlink/read-path';
import { ShardedLinkRepository } from '@shortlink/sharding-domain';
import { DOMAIN_SETTINGS_STORE, RATE_WINDOW_STORE, TENANT_STORE } from '@shortlink/tenants-domain';
import { CLICK_AGGREGATE_STORE, CLICK_EVENT_SINK, CLICK_EVENT_SOURCE, VISITOR_SECRET } from '@shortlink/clicks-domain';
import { LazyMysqlLinkShardStore, SqliteLinkShardStore } from '@shortlink/link-store';
import { LazyMysqlMetaStore, SqliteMetaStore } from './meta';
import {
  FileSnapshotStore,
  MemoryCacheStore,
  MemoryClickLeases,
  MemoryRateWindows,
  MemoryVisitorWindows,
  RedisClickLeases,
  RedisClusterStore,
  RedisRateWindows,
  RedisVisitorWindows,
} from '@shortlink/cache';
import { KafkaClickEventSink, MemoryClickEventSink } from '@shortlink/bus';
import { SqlClickAggregateStore } from '@shortlink/olap';
import { portsFor } from './catalog';
import { SharedPorts } from './ports-module';

const SECRETS = { SHORTLINK_CODE_SECRET: 'k'.repeat(20) + 'abcdefghijklmnop', SHORTLINK_VISITOR_SECRET: 'v'.repeat(20) + 'ABCDEFGHIJKLMNOP' };

describe('port selection', () => {
  it('opens only the ports of the tokens asked for, and refuses a token no port provides', () => {
    expect(portsFor([CACHE_STORE]).map((p) => p.name)).toEqual(['cache']);
    expect(portsFor([TENANT_STORE, LINK_REPOSITORY, CLICK_EVENT_SINK]).map((p) => p.name)).toEqual(['meta-db', 'link-shards', 'click-bus']);
    expect(() => portsFor([Symbol('NOT_A_PORT')])).toThrow(/no port provides Symbol\(NOT_A_PORT\)/);
  });

  it('picks the server adapters by driver', async () => {
    const config = loadConfig({
      ...SECRETS,
      DB_DRIVER: 'mysql',
      MYSQL_SHARDS: 's0=mysql://u:p@127.0.0.1:1/a,s1=mysql://u:p@127.0.0.1:1/b',
      MYSQL_META_URL: 'mysql://u:p@127.0.0.1:1/m',
      CACHE_DRIVER: 'redis',
      REDIS_CLUSTER_NODES: '127.0.0.1:1',
      BUS_DRIVER: 'kafka',
      KAFKA_BROKERS: '127.0.0.1:1',
      SHARD_STRATEGY: 'jump',
    });
    const opened = await Promise.all(
      portsFor([TENANT_STORE, RATE_WINDOW_STORE, LINK_REPOSITORY, CACHE_STORE, CLICK_EVENT_SINK, CODE_SECRET]).map((p) => p.open(config)),
    );
    const bound = new Map(opened.flatMap((o) => [...o.bindings]));
    try {
      expect(bound.get(SEQUENCE_STORE)).toBeInstanceOf(LazyMysqlMetaStore);
      expect(bound.get(TENANT_STORE)).toBe((bound.get(SEQUENCE_STORE) as LazyMysqlMetaStore).tenants);
      expect(bound.get(RATE_WINDOW_STORE)).toBeInstanceOf(RedisRateWindows);
      expect(bound.get(VISITOR_WINDOW_STORE)).toBeInstanceOf(RedisVisitorWindows);
      expect(bound.get(CLICK_LEASE_STORE)).toBeInstanceOf(RedisClickLeases);
      const repository = bound.get(LINK_REPOSITORY) as ShardedLinkRepository;
      expect(repository.allStores().map((s) => [s.shardName, s instanceof LazyMysqlLinkShardStore])).toEqual([
        ['s0', true],
        ['s1', true],
      ]);
      expect(repository.router.strategy).toBe('jump');
      expect(bound.get(CACHE_STORE)).toBeInstanceOf(RedisClusterStore);
      expect(bound.get(CLICK_EVENT_SINK)).toBeInstanceOf(KafkaClickEventSink);
      expect(bound.get(CODE_SECRET)).toBe(SECRETS.SHORTLINK_CODE_SECRET);
    } finally {
      for (const o of opened.reverse()) await o.close();
    }
    // Loads and opens the real drivers (kafkajs, ioredis, mysql2) against a closed port and closes them:
    // 3 s with other workers on this 2-core machine, more under a CPU hog. The bound stops a hang only.
  }, 30_000);
});

describe('SharedPorts on the embedded profile', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'shortlink-ports-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('binds every token to the embedded adapter, shares one instance between apps, probes and closes them', async () => {
    const config = loadConfig({ SHORTLINK_DATA_DIR: dir, SQLITE_SHARDS: 'a,b' });
    const all = [
      TENANT_STORE,
      DOMAIN_SETTINGS_STORE,
      RATE_WINDOW_STORE,
      SEQUENCE_STORE,
      LINK_REPOSITORY,
      CACHE_STORE,
      SNAPSHOT_STORE,
      CLICK_EVENT_SINK,
      CLICK_EVENT_SOURCE,
      CLICK_AGGREGATE_STORE,
      CODE_SECRET,
      VISITOR_SECRET,
      VISITOR_WINDOW_STORE,
      CLICK_LEASE_STORE,
    ];
    const ports = await SharedPorts.open(config, all);
    const meta = ports.get<SqliteMetaStore>(SEQUENCE_STORE);
    expect(meta).toBeInstanceOf(SqliteMetaStore);
    expect(ports.get(TENANT_STORE)).toBe(meta.tenants);
    expect(ports.get(DOMAIN_SETTINGS_STORE)).toBe(meta.domainSettings);
    expect(ports.get(RATE_WINDOW_STORE)).toBeInstanceOf(MemoryRateWindows);
    expect(ports.get(VISITOR_WINDOW_STORE)).toBeInstanceOf(MemoryVisitorWindows);
    expect(ports.get(CLICK_LEASE_STORE)).toBeInstanceOf(MemoryClickLeases);
    const stores = ports.get<ShardedLinkRepository>(LINK_REPOSITORY).allStores();
    expect(stores.map((s) => [s.shardName, s instanceof SqliteLinkShardStore])).toEqual([
      ['a', true],
      ['b', true],
    ]);
    expect(ports.get(CACHE_STORE)).toBeInstanceOf(MemoryCacheStore);
    expect(ports.get(SNAPSHOT_STORE)).toBeInstanceOf(FileSnapshotStore);
    expect(ports.get(CLICK_EVENT_SINK)).toBeInstanceOf(MemoryClickEventSink);
    expect(ports.get(CLICK_AGGREGATE_STORE)).toBeInstanceOf(SqlClickAggregateStore);

    expect(ports.get<string>(CODE_SECRET)).toHaveLength(43);
    expect(ports.get<string>(VISITOR_SECRET)).not.toBe(ports.get<string>(CODE_SECRET));
    // The bridge of one app probes only that app's ports.
    const bridge = ports.bridge([CACHE_STORE]);
    const probes = (bridge.providers as Array<{ provide: unknown; useValue?: () => Array<{ name: string }> }>).find(
      (p) => typeof p.provide === 'symbol' && p.provide.toString() === 'Symbol(HEALTH_PROBES)',
    )!.useValue!();
    expect(probes.map((p) => p.name)).toEqual(['cache']);
    await ports.close();
    await expect(meta.ping()).rejects.toThrow(/not open/);
    // Opens the embedded stack: SQLite with its migrations and chdb with the OLAP migrations, about 2 s
    // alone and over 5 s under a CPU hog on both cores. The bound stops a hang only.
  }, 60_000);
});
