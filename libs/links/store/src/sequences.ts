import { IdBlock, SequenceStore } from '@shortlink/links-domain';
import { MysqlDb, SqliteDb } from '@shortlink/sql';

/** The id sequences of the MySQL meta database. */
export class MysqlSequenceStore implements SequenceStore {
  constructor(private readonly ds: MysqlDb) {}

  /**
   * LAST_INSERT_ID(expr) makes the increment and the read one atomic statement on one
   * connection, so concurrent instances always get disjoint blocks.
   */
  async allocateBlock(sequence: string, size: number): Promise<IdBlock> {
    const runner = this.ds.createQueryRunner();
    try {
      await runner.connect();
      await runner.query('INSERT IGNORE INTO sequences (name, next_id) VALUES (?, 1)', [sequence]);
      await runner.query('UPDATE sequences SET next_id = LAST_INSERT_ID(next_id + ?) WHERE name = ?', [size, sequence]);
      const rows: Array<{ end: string }> = await runner.query('SELECT LAST_INSERT_ID() AS end');
      const end = BigInt(rows[0].end);
      return { start: end - BigInt(size), end };
    } finally {
      await runner.release();
    }
  }
}

/** The id sequences of the SQLite meta database. */
export class SqliteSequenceStore implements SequenceStore {
  constructor(private readonly db: SqliteDb) {}

  /** One write-locked statement: atomic across every process sharing the file. */
  async allocateBlock(sequence: string, size: number): Promise<IdBlock> {
    const row = this.db
      .transaction(() => {
        this.db.prepare('INSERT OR IGNORE INTO sequences (name, next_id) VALUES (?, 1)').run(sequence);
        return this.db.prepare('UPDATE sequences SET next_id = next_id + ? WHERE name = ? RETURNING next_id').get(size, sequence) as { next_id: number };
      })
      .immediate();
    const end = BigInt(row.next_id);
    return { start: end - BigInt(size), end };
  }
}
