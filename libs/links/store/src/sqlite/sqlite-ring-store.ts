import { MoveProgress, MoveRecord, parseRingVersion, RingStore, RingVersion, ringVersionJson, RingWatcherInfo } from '@shortlink/sharding-domain';
import { migrateSqlite, openSqlite, SqliteDb } from '@shortlink/sql';

interface MoveRow {
  id: string;
  progress: string;
  owner: string | null;
  owner_seen_at: number | null;
  finished: number;
}

/**
 * The versioned shard ring in the embedded profile's meta file (docs/design.md, "Online
 * resharding"). Processes sharing the file share the clock of this machine.
 */
export class SqliteRingStore implements RingStore {
  private readonly db: SqliteDb;

  /** `migrations`: the meta database's (the ring store may be the first to open it); a file of its own needs LINKS_SQLITE_MIGRATIONS only. */
  constructor(file: string, migrations: ReadonlyArray<{ name: string; up: string }>) {
    this.db = openSqlite(file);
    migrateSqlite(this.db, migrations);
  }

  async current(): Promise<RingVersion | null> {
    const row = this.db.prepare('SELECT version, spec FROM shard_ring_versions ORDER BY version DESC LIMIT 1').get() as
      { version: number; spec: string } | undefined;
    return row ? parseRingVersion(row.version, row.spec) : null;
  }

  async publish(next: RingVersion, expected: number | null): Promise<boolean> {
    if (next.version !== (expected ?? 0) + 1) return false;
    const result = this.db
      .prepare('INSERT OR IGNORE INTO shard_ring_versions (version, spec, created_at) VALUES (?, ?, ?)')
      .run(next.version, ringVersionJson(next), Date.now());
    return result.changes === 1;
  }

  async history(limit: number): Promise<RingVersion[]> {
    const rows = this.db.prepare('SELECT version, spec FROM shard_ring_versions ORDER BY version DESC LIMIT ?').all(limit) as Array<{
      version: number;
      spec: string;
    }>;
    return rows.map((r) => parseRingVersion(r.version, r.spec));
  }

  async heartbeat(instanceId: string, app: string, version: number): Promise<void> {
    this.db
      .prepare(
        'INSERT INTO shard_ring_watchers (instance_id, app, version, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT (instance_id) DO UPDATE SET app = excluded.app, version = excluded.version, seen_at = excluded.seen_at',
      )
      .run(instanceId, app, version, Date.now());
  }

  async watchers(withinMs: number): Promise<RingWatcherInfo[]> {
    const now = Date.now();
    const rows = this.db
      .prepare('SELECT instance_id, app, version, seen_at FROM shard_ring_watchers WHERE seen_at > ? ORDER BY instance_id')
      .all(now - withinMs) as Array<{ instance_id: string; app: string; version: number; seen_at: number }>;
    return rows.map((r) => ({ instanceId: r.instance_id, app: r.app, version: r.version, ageMs: now - r.seen_at }));
  }

  async forget(instanceId: string): Promise<void> {
    this.db.prepare('DELETE FROM shard_ring_watchers WHERE instance_id = ?').run(instanceId);
  }

  async latestMove(): Promise<MoveRecord | null> {
    const row = this.db
      .prepare('SELECT id, progress, owner, owner_seen_at, finished FROM shard_moves ORDER BY finished ASC, created_at DESC, rowid DESC LIMIT 1')
      .get() as MoveRow | undefined;
    if (!row) return null;
    return {
      id: row.id,
      progress: JSON.parse(row.progress) as MoveProgress,
      owner: row.owner,
      ownerAgeMs: row.owner_seen_at === null ? null : Date.now() - row.owner_seen_at,
      finished: row.finished === 1,
    };
  }

  async saveMove(progress: MoveProgress, owner: string, finished: boolean): Promise<void> {
    const now = Date.now();
    this.db
      .prepare(
        `INSERT INTO shard_moves (id, progress, owner, owner_seen_at, finished, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET progress = excluded.progress, owner = excluded.owner, owner_seen_at = excluded.owner_seen_at, finished = excluded.finished, updated_at = excluded.updated_at`,
      )
      .run(progress.id, JSON.stringify(progress), owner, now, finished ? 1 : 0, now, now);
  }

  async claimMove(id: string, owner: string, staleAfterMs: number): Promise<boolean> {
    const now = Date.now();
    const result = this.db
      .prepare(
        'UPDATE shard_moves SET owner = ?, owner_seen_at = ? WHERE id = ? AND (owner = ? OR owner IS NULL OR owner_seen_at IS NULL OR owner_seen_at < ?)',
      )
      .run(owner, now, id, owner, now - staleAfterMs);
    return result.changes === 1;
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
