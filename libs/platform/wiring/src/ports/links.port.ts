import { join } from 'path';
import { createShardRouter } from '@shortlink/shard-router';
import { LINK_REPOSITORY, LinkShardStore, ShardedLinkRepository } from '@shortlink/links-domain';
import { LazyMysqlLinkShardStore, SqliteLinkShardStore } from '@shortlink/link-store';
import { itself, portSpec } from '../port-spec';

/** The link shards (MySQL databases or SQLite files) behind the shard router. */
export const linksPort = portSpec({
  name: 'link-shards',
  open: (config) => {
    const db = config.db;
    const stores: LinkShardStore[] =
      db.driver === 'mysql'
        ? db.shards.map((s) => new LazyMysqlLinkShardStore(s.name, { url: s.url, poolSize: db.poolSize }))
        : db.shards.map((name) => new SqliteLinkShardStore(name, join(config.runtime.dataDir, 'shards', `${name}.sqlite`)));
    const router = createShardRouter(db.strategy, stores.map((s) => ({ name: s.shardName })), db.virtualNodes);
    return new ShardedLinkRepository(router, stores);
  },
  provides: [[LINK_REPOSITORY, itself]],
  close: async (repository) => {
    for (const store of repository.allStores()) await store.close();
  },
  probes: (repository) => repository.allStores().map((s) => ({ name: `shard-${s.shardName}`, check: () => s.ping() })),
});
