import { DataSource } from 'typeorm';
import { SqliteDb } from '@shortlink/sql';
import { SqlWebhookStore } from './sql-webhook-store';

/** The webhook store on the embedded meta database (times in epoch ms). */
export const sqliteWebhookStore = (db: SqliteDb): SqlWebhookStore =>
  new SqlWebhookStore(
    {
      select: async <T>(sql: string, params: readonly unknown[]) => db.prepare(sql).all(...params) as T[],
      change: async (sql, params) => db.prepare(sql).run(...params).changes,
    },
    { time: (d) => d.getTime(), insertIgnore: 'INSERT OR IGNORE INTO' },
  );

/** The webhook store on the MySQL meta database (DATETIME(3)). */
export const mysqlWebhookStore = (ds: DataSource): SqlWebhookStore =>
  new SqlWebhookStore(
    {
      select: async <T>(sql: string, params: readonly unknown[]) => (await ds.query(sql, [...params])) as T[],
      change: async (sql, params) => ((await ds.query(sql, [...params])) as { affectedRows: number }).affectedRows,
    },
    { time: (d) => d, insertIgnore: 'INSERT IGNORE INTO' },
  );
