import Database from 'better-sqlite3';
import { mkdirSync } from 'fs';
import { dirname } from 'path';

export type SqliteDb = Database.Database;

/** Opens (creating if needed) a SQLite file in WAL mode, safe for several processes. */
export function openSqlite(file: string): SqliteDb {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  return db;
}

/** Ordered, idempotent migrations tracked in a `_migrations` table. */
export function migrateSqlite(db: SqliteDb, migrations: ReadonlyArray<{ name: string; up: string }>): void {
  db.exec('CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)');
  const applied = new Set((db.prepare('SELECT name FROM _migrations').all() as Array<{ name: string }>).map((r) => r.name));
  for (const m of migrations) {
    if (applied.has(m.name)) continue;
    db.transaction(() => {
      db.exec(m.up);
      db.prepare('INSERT INTO _migrations (name, applied_at) VALUES (?, ?)').run(m.name, Date.now());
    }).immediate();
  }
}
