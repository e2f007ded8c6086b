import { createConnection } from 'mysql2/promise';
import { requireEnv } from '@shortlink/testing';
import { describeRingStoreContract, describeShardMoveContract } from '../contract/resharding.contract';
import { MysqlLinkShardStore } from './mysql-link-shard-store';
import { MysqlRingStore } from './mysql-ring-store';

/**
 * Runs against the MariaDB instances of `npm run stack:up`, each suite on scratch databases of its
 * own (created and dropped here), so that the ring and the shards of the stack are never touched.
 */
async function scratchDatabases(names: string[]): Promise<{ urls: string[]; drop(): Promise<void> }> {
  const server = new URL(requireEnv('MYSQL_META_URL'));
  const admin = await createConnection({
    host: server.hostname,
    port: Number(server.port),
    user: decodeURIComponent(server.username),
    password: decodeURIComponent(server.password),
  });
  const run = Date.now().toString(36);
  const dbs = names.map((n) => `shortlink_it_${n}_${run}`);
  for (const db of dbs) await admin.query(`CREATE DATABASE \`${db}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  return {
    urls: dbs.map((db) => `${server.protocol}//${server.username}:${server.password}@${server.host}/${db}`),
    drop: async () => {
      for (const db of dbs) await admin.query(`DROP DATABASE IF EXISTS \`${db}\``);
      await admin.end();
    },
  };
}

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
  const ring = new MysqlRingStore({ url: scratch.urls[0] });
  return {
    ring,
    close: async () => {
      await ring.close();
      await scratch.drop();
    },
  };
});
