import { createConnection } from 'mysql2/promise';
import { scratchMysqlDatabases } from '@shortlink/testing';
import { MysqlLinkShardStore } from './mysql-link-shard-store';

/**
 * Several processes opening a new shard at once (a reshard adding it while the apps follow the
 * ring) must all get a migrated database: the DDL is not transactional, so without the migration
 * lock two of them run the same ALTER and one fails (docs/design.md "Migrations").
 */
describe('MySQL migrations opened at once', () => {
  it('eight stores opening the same new database concurrently all succeed, each migration recorded once', async () => {
    const scratch = await scratchMysqlDatabases(['migrate_race']);
    const stores: MysqlLinkShardStore[] = [];
    try {
      const opened = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => MysqlLinkShardStore.open(`race${i}`, { url: scratch.urls[0], poolSize: 2 })));
      for (const o of opened) if (o.status === 'fulfilled') stores.push(o.value);
      expect(opened.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason))).toEqual([]);

      const url = new URL(scratch.urls[0]);
      const conn = await createConnection({
        host: url.hostname,
        port: Number(url.port),
        user: decodeURIComponent(url.username),
        password: decodeURIComponent(url.password),
        database: url.pathname.slice(1),
      });
      try {
        const [tables] = await conn.query<Array<{ t: string } & import('mysql2').RowDataPacket>>(
          "SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '%migrations%'",
        );
        expect(tables.length).toBe(1);
        const [rows] = await conn.query<Array<{ name: string; n: number } & import('mysql2').RowDataPacket>>(
          `SELECT name, COUNT(*) AS n FROM \`${tables[0].t}\` GROUP BY name`,
        );
        expect(rows.length).toBeGreaterThan(3);
        expect(rows.filter((r) => Number(r.n) !== 1)).toEqual([]);
      } finally {
        await conn.end();
      }
    } finally {
      for (const s of stores) await s.close();
      await scratch.drop();
    }
  }, 120_000);
});
