import { hostname } from 'os';
import { basename, dirname, join } from 'path';
import { randomUUID } from 'crypto';
import { Logger } from '@nestjs/common';
import type { AppConfig } from '@shortlink/config';
import { LINK_EVENT_OUTBOXES, LINK_REPOSITORY, LinkEventOutboxes, OutboxStamp, UNCLAIMED } from '@shortlink/links-domain';
import {
  LinkShardStore,
  MovableShardStore,
  MovePhase,
  RingSpec,
  RingStore,
  RingWatcher,
  RoutingState,
  ShardedLinkRepository,
} from '@shortlink/sharding-domain';
import { LazyMysqlLinkShardStore, MysqlRingStore, SqliteLinkShardStore, SqliteRingStore } from '@shortlink/link-store';
import { META_MYSQL_MIGRATIONS, META_SQLITE_MIGRATIONS } from '../meta/meta-migrations';
import { portSpec } from '../port';

const SHARD_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MOVE_PHASE_GAUGE: Record<MovePhase | 'stable', number> = { stable: 0, dual_write: 1, copying: 2, frozen: 3 };

/**
 * Every shard this installation can reach, by name: the configured ones and the spare ones
 * (MYSQL_SPARE_SHARDS), or any SQLite file under <data dir>/shards (a new shard is a new file).
 * Stores open on first use; the events their writes put in the outboxes carry `stamp`.
 */
export class ShardCatalog {
  private readonly opened = new Map<string, MovableShardStore>();

  constructor(
    private readonly config: AppConfig,
    readonly stamp: OutboxStamp = UNCLAIMED,
  ) {}

  /** The shards of the configuration's ring (written as version 1 when the meta database has none). */
  bootstrap(): RingSpec {
    const db = this.config.db;
    const names = db.driver === 'mysql' ? db.shards.map((s) => s.name) : db.shards;
    return { strategy: db.strategy, virtualNodes: db.virtualNodes, shards: names.map((name) => ({ name })) };
  }

  /** Names known without opening anything (the spare ones included). */
  known(): string[] {
    const db = this.config.db;
    return db.driver === 'mysql' ? [...db.shards, ...db.spareShards].map((s) => s.name) : [...db.shards];
  }

  find(name: string): MovableShardStore | null {
    const existing = this.opened.get(name);
    if (existing) return existing;
    const db = this.config.db;
    let store: MovableShardStore | null = null;
    if (db.driver === 'mysql') {
      const shard = [...db.shards, ...db.spareShards].find((s) => s.name === name);
      if (shard) store = new LazyMysqlLinkShardStore(shard.name, { url: shard.url, poolSize: db.poolSize }, this.stamp);
    } else if (SHARD_NAME.test(name)) {
      store = new SqliteLinkShardStore(name, join(this.config.runtime.dataDir, 'shards', `${name}.sqlite`), this.stamp);
    }
    if (store) this.opened.set(name, store);
    return store;
  }

  /**
   * Every shard known here and every one opened (a shard a move added, or one it took out of the
   * ring: the events in its outbox must still go out; docs/design.md, "Edits reach every instance").
   */
  all(): MovableShardStore[] {
    for (const name of this.known()) this.find(name);
    return [...this.opened.values()];
  }

  /** Like find, for callers that need the shard (the resharding tool). */
  get(name: string): MovableShardStore {
    const store = this.find(name);
    if (!store) throw new Error(`shard "${name}" is not configured here (MYSQL_SHARDS or MYSQL_SPARE_SHARDS)`);
    return store;
  }

  async closeAll(): Promise<void> {
    for (const store of this.opened.values()) await store.close();
    this.opened.clear();
  }
}

export function ringStoreFor(config: AppConfig): RingStore {
  return config.db.driver === 'mysql'
    ? new MysqlRingStore({ url: config.db.metaUrl }, META_MYSQL_MIGRATIONS)
    : new SqliteRingStore(join(config.runtime.dataDir, 'meta.sqlite'), META_SQLITE_MIGRATIONS);
}

/** Which program this is, for the watcher list (`apps/redirect/src/main.ts` → redirect). */
function programName(): string {
  const entry = process.argv[1] ?? 'node';
  const dir = basename(dirname(dirname(entry)));
  return dir === 'tools' || dir === '.' ? basename(entry).replace(/\.[jt]s$/, '') : dir;
}

export interface LinkShards {
  readonly repository: ShardedLinkRepository;
  readonly watcher: RingWatcher;
  readonly ring: RingStore;
  readonly catalog: ShardCatalog;
  /** The shards' outboxes, for this instance's outbox relay (the generation app runs one). */
  readonly outboxes: LinkEventOutboxes;
}

/**
 * The link shards behind the versioned shard ring: the repository routes with the newest ring
 * version of the meta database, which the watcher reads every SHARD_RING_POLL_MS (docs/design.md,
 * "Online resharding").
 */
export async function openLinkShards(config: AppConfig, app = programName()): Promise<LinkShards> {
  const instanceId = `${app}@${hostname()}:${process.pid}:${randomUUID().slice(0, 6)}`;
  // The events this process's writes put in the outboxes are its relay's for a lease; then anyone's.
  const catalog = new ShardCatalog(config, { owner: instanceId, leaseMs: config.links.outbox.leaseMs });
  const bootstrap = catalog.bootstrap();
  const db = config.db;
  const initial = bootstrap.shards.map((s) => catalog.get(s.name) as LinkShardStore);
  const repository = new ShardedLinkRepository(new RoutingState({ version: 0, spec: bootstrap, move: null }), initial, {
    resolveStore: (name) => catalog.find(name),
    timeoutMs: db.shardTimeoutMs,
    breakerFailures: db.shardBreaker.failures,
    breakerOpenMs: db.shardBreaker.openMs,
    // A redirect's share of its DB_CONCURRENCY per shard (docs/design.md, "Failure containment").
    redirectLookupsPerShard: Math.max(1, Math.ceil(config.redirect.dbConcurrency / 4)),
    redirectLookupQueue: config.redirect.dbQueue,
  });
  const ring = ringStoreFor(config);
  const logger = new Logger('ShardRing');
  const watcher = new RingWatcher(ring, repository, {
    instanceId,
    app,
    pollMs: db.ring.pollMs,
    movePollMs: db.ring.movePollMs,
    leaseMs: db.ring.leaseMs,
    bootstrap,
    log: (level, message) => (level === 'error' ? logger.error(message) : level === 'warn' ? logger.warn(message) : logger.log(message)),
  });
  await watcher.start();
  return { repository, watcher, ring, catalog, outboxes: { stamp: catalog.stamp, all: () => catalog.all() } };
}

/** The link shards (MySQL databases or SQLite files) behind the versioned shard ring. */
export const linksPort = portSpec({
  name: 'link-shards',
  open: (config) => openLinkShards(config),
  provides: [
    [LINK_REPOSITORY, (shards) => shards.repository],
    [LINK_EVENT_OUTBOXES, (shards) => shards.outboxes],
  ],
  close: async (shards) => {
    await shards.watcher.stop();
    await shards.catalog.closeAll();
    await shards.ring.close();
  },
  probes: (shards) => [
    // One shard down leaves the links of the others working: not a reason to take the instance out.
    ...shards.repository.allStores().map((s) => ({ name: `shard-${s.shardName}`, critical: false, check: () => s.ping() })),
    {
      name: 'shard-ring',
      critical: false,
      check: async () => {
        if (!shards.watcher.valid()) throw new Error(shards.watcher.describe());
      },
      details: () => ({ ...shards.watcher.status() }),
    },
  ],
  gauges: (shards) => [
    { name: 'shortlink_shard_ring_version', help: 'Version of the shard ring this instance routes links with', value: () => shards.watcher.version },
    {
      name: 'shortlink_shard_ring_move_phase',
      help: 'Move in progress: 0 none, 1 dual_write, 2 copying, 3 frozen',
      value: () => MOVE_PHASE_GAUGE[shards.repository.routing.phase ?? 'stable'],
    },
    {
      name: 'shortlink_shard_frozen_write_waits',
      help: 'Writes of moving links that waited for a frozen move to switch, since start',
      value: () => shards.repository.frozenWaits.count,
    },
    {
      name: 'shortlink_shard_frozen_write_wait_max_ms',
      help: 'Longest wait of a write of a moving link for a frozen move to switch, since start (ms)',
      value: () => shards.repository.frozenWaits.longestMs,
    },
  ],
});
