import { scratchMysqlDatabases as scratchDatabases } from '@shortlink/testing';
import { describeRingStoreContract, describeShardMoveContract } from '../contract/resharding.contract';
import { MysqlLinkShardStore } from './mysql-link-shard-store';
import { MysqlRingStore } from './mysql-ring-store';
import { LINKS_MYSQL_MIGRATIONS } from './migrations';

/** Runs against the MariaDB of `npm run stack:up`, each suite on scratch databases of its own. */
describeShardMoveContract('mysql', async () => {
  const scratch = await scratchDatabases(['move_a', 'move_b']);
  const a = await MysqlLinkShardStore.open('a', { url: scratch.urls[0] });
  const b = await MysqlLinkShardStore.open('b', { url: scratch.urls[1] });
  return {
    a,
    b,
    close: async () => {
      await a.close();
      await b.close();
      await scratch.drop();
    },
  };
});

describeRingStoreContract('mysql', async () => {
  const scratch = await scratchDatabases(['ring']);
  const ring = new MysqlRingStore({ url: scratch.urls[0] }, LINKS_MYSQL_MIGRATIONS);
  return {
    ring,
    close: async () => {
      await ring.close();
      await scratch.drop();
    },
  };
});
