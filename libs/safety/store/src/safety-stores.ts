import { DataSource } from 'typeorm';
import { SqliteDb } from '@shortlink/sql';
import { SqlSafetyStore } from './sql-safety-store';

/** The safety tables on the embedded meta database (times in epoch ms, link ids as SQLite integers). */
export const sqliteSafetyStore = (db: SqliteDb): SqlSafetyStore =>
  new SqlSafetyStore(
    {
      select: async <T>(sql: string, params: readonly unknown[]) => db.prepare(sql).all(...params) as T[],
      change: async (sql, params) => db.prepare(sql).run(...params).changes,
    },
    { time: (d) => d.getTime(), insertIgnore: 'INSERT OR IGNORE INTO' },
    (id) => BigInt(id),
  );

/** The safety tables on the MySQL meta database (DATETIME(3), BIGINT link ids as decimal strings). */
export const mysqlSafetyStore = (ds: DataSource): SqlSafetyStore =>
  new SqlSafetyStore(
    {
      select: async <T>(sql: string, params: readonly unknown[]) => (await ds.query(sql, [...params])) as T[],
      change: async (sql, params) => ((await ds.query(sql, [...params])) as { affectedRows: number }).affectedRows,
    },
    { time: (d) => d, insertIgnore: 'INSERT IGNORE INTO' },
    (id) => id,
  );
