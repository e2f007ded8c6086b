import { DataSource, MigrationInterface } from 'typeorm';
import { MoveProgress, MoveRecord, parseRingVersion, RingStore, RingVersion, ringVersionJson, RingWatcherInfo } from '@shortlink/sharding-domain';
import { isMysqlDuplicate, LazyOpen, MysqlConnectionOptions, openMysql } from '@shortlink/sql';

/** Age in ms of a DATETIME(3) column, by the server's clock (every instance compares against one clock). */
const ageMs = (column: string) => `TIMESTAMPDIFF(MICROSECOND, ${column}, NOW(3)) DIV 1000`;

/**
 * The versioned shard ring in the meta database (docs/design.md, "Online resharding"). Opened on
 * first use and again after a failure, so that an app boots while the meta database is down.
 */
export class MysqlRingStore implements RingStore {
  private readonly db: LazyOpen<{ ds: DataSource; close(): Promise<void> }>;

  /** `migrations`: the meta database's (the ring store may be the first to open it); a database of its own needs LINKS_MYSQL_MIGRATIONS only. */
  constructor(options: MysqlConnectionOptions, migrations: Array<new () => MigrationInterface>) {
    this.db = new LazyOpen('meta database (shard ring)', async () => {
      const ds = await openMysql({ poolSize: 2, ...options }, migrations, '_migrations');
      return { ds, close: () => ds.destroy() };
    });
  }

  private async query<T>(sql: string, params: unknown[] = []): Promise<T> {
    return (await this.db.get()).ds.query(sql, params) as Promise<T>;
  }

  async current(): Promise<RingVersion | null> {
    const rows = await this.query<Array<{ version: number; spec: string }>>('SELECT version, spec FROM shard_ring_versions ORDER BY version DESC LIMIT 1');
    return rows.length ? parseRingVersion(Number(rows[0].version), rows[0].spec) : null;
  }

  async publish(next: RingVersion, expected: number | null): Promise<boolean> {
    // Versions are consecutive: version expected + 1 exists exactly when someone else published after `expected`.
    if (next.version !== (expected ?? 0) + 1) return false;
    try {
      await this.query('INSERT INTO shard_ring_versions (version, spec, created_at) VALUES (?, ?, NOW(3))', [next.version, ringVersionJson(next)]);
      return true;
    } catch (error) {
      if (isMysqlDuplicate(error)) return false;
      throw error;
    }
  }

  async history(limit: number): Promise<RingVersion[]> {
    const rows = await this.query<Array<{ version: number; spec: string }>>('SELECT version, spec FROM shard_ring_versions ORDER BY version DESC LIMIT ?', [
      limit,
    ]);
    return rows.map((r) => parseRingVersion(Number(r.version), r.spec));
  }

  async heartbeat(instanceId: string, app: string, version: number): Promise<void> {
    await this.query(
      'INSERT INTO shard_ring_watchers (instance_id, app, version, seen_at) VALUES (?, ?, ?, NOW(3)) ON DUPLICATE KEY UPDATE app = VALUES(app), version = VALUES(version), seen_at = NOW(3)',
      [instanceId, app, version],
    );
  }

  async watchers(withinMs: number): Promise<RingWatcherInfo[]> {
    const rows = await this.query<Array<{ instance_id: string; app: string; version: number; age_ms: string | number }>>(
      `SELECT instance_id, app, version, ${ageMs('seen_at')} AS age_ms FROM shard_ring_watchers WHERE seen_at > NOW(3) - INTERVAL ? MICROSECOND ORDER BY instance_id`,
      [withinMs * 1000],
    );
    return rows.map((r) => ({ instanceId: r.instance_id, app: r.app, version: Number(r.version), ageMs: Number(r.age_ms) }));
  }

  async forget(instanceId: string): Promise<void> {
    await this.query('DELETE FROM shard_ring_watchers WHERE instance_id = ?', [instanceId]);
  }

  async latestMove(): Promise<MoveRecord | null> {
    const rows = await this.query<Array<{ id: string; progress: string; owner: string | null; owner_age: string | number | null; finished: number }>>(
      `SELECT id, progress, owner, ${ageMs('owner_seen_at')} AS owner_age, finished FROM shard_moves ORDER BY finished ASC, created_at DESC LIMIT 1`,
    );
    if (!rows.length) return null;
    const r = rows[0];
    return {
      id: r.id,
      progress: JSON.parse(r.progress) as MoveProgress,
      owner: r.owner,
      ownerAgeMs: r.owner_age === null ? null : Number(r.owner_age),
      finished: Number(r.finished) === 1,
    };
  }

  async saveMove(progress: MoveProgress, owner: string, finished: boolean): Promise<void> {
    await this.query(
      `INSERT INTO shard_moves (id, progress, owner, owner_seen_at, finished, created_at, updated_at) VALUES (?, ?, ?, NOW(3), ?, NOW(3), NOW(3))
       ON DUPLICATE KEY UPDATE progress = VALUES(progress), owner = VALUES(owner), owner_seen_at = NOW(3), finished = VALUES(finished), updated_at = NOW(3)`,
      [progress.id, JSON.stringify(progress), owner, finished ? 1 : 0],
    );
  }

  async claimMove(id: string, owner: string, staleAfterMs: number): Promise<boolean> {
    const result = await this.query<{ affectedRows: number }>(
      'UPDATE shard_moves SET owner = ?, owner_seen_at = NOW(3) WHERE id = ? AND (owner = ? OR owner IS NULL OR owner_seen_at IS NULL OR owner_seen_at < NOW(3) - INTERVAL ? MICROSECOND)',
      [owner, id, owner, staleAfterMs * 1000],
    );
    return result.affectedRows === 1;
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
