import { randomUUID } from 'crypto';
import { mkdirSync } from 'fs';
import { unlink, writeFile } from 'fs/promises';
import { tmpdir } from 'os';
import { join } from 'path';
import type * as Chdb from 'chdb';
import { assertQualifiedTable, columnNames, OlapColumn, OlapError, OlapExecutor, statementHead } from '../olap-executor';
import { sqlString } from '../sql-literals';

/**
 * chdb maps a ~150 MB native engine on first require; load it only when an embedded executor is
 * really opened, so server-profile processes importing this library never pay for it.
 */
function loadChdb(): typeof Chdb {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('chdb') as typeof Chdb;
}

/**
 * OlapExecutor over chdb (in-process ClickHouse), persisted in a directory.
 *
 * - libchdb binds ONE data directory per process: a second executor on another directory fails
 *   while this one is open; close() waits until the engine has really released it.
 * - Calls are serialized (one statement at a time on the session), so a caller's statements run
 *   in the order issued and a close() never cuts a running one.
 * - 64-bit integers are quoted in JSON output (connection argument), like 18.16 does by default.
 */
export class ChdbExecutor implements OlapExecutor {
  private readonly chdb: typeof Chdb;
  private readonly session: Chdb.Session;
  private tail: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | undefined;

  constructor(readonly directory: string) {
    mkdirSync(directory, { recursive: true });
    this.chdb = loadChdb();
    try {
      this.session = new this.chdb.Session(directory, {
        connectionArgs: ['--output_format_json_quote_64bit_integers=1'],
      });
    } catch (e) {
      throw toOlapError(e, `open chdb session at ${directory}`);
    }
  }

  async command(sql: string): Promise<void> {
    return this.run(sql, async () => {
      await this.session.queryAsync(sql);
    });
  }

  async insertJsonEachRow(table: string, rows: readonly object[]): Promise<void> {
    assertQualifiedTable(table);
    if (rows.length === 0) return this.run('', async () => undefined); // chdb refuses an empty INSERT (code 108)
    // JSON.stringify never emits a raw newline, so one line per row is exact JSONEachRow.
    const sql = `INSERT INTO ${table} FORMAT JSONEachRow\n` + rows.map((r) => JSON.stringify(r)).join('\n');
    return this.run(`INSERT INTO ${table} FORMAT JSONEachRow`, async () => {
      await this.session.queryAsync(sql);
    });
  }

  /**
   * chdb's Node API takes text formats only inline: the rows go through a file of the process's
   * temporary directory, read by the `file` table function in the same format ClickHouse reads.
   */
  async insertRowBinary(table: string, columns: readonly OlapColumn[], rows: Buffer): Promise<void> {
    assertQualifiedTable(table);
    const names = columnNames(columns);
    if (rows.length === 0) return this.run('', async () => undefined);
    const path = join(tmpdir(), `shortlink-chdb-${randomUUID()}.rowbinary`);
    const structure = columns.map((c) => `${c.name} ${c.type}`).join(', ');
    const sql = `INSERT INTO ${table} (${names}) SELECT ${names} FROM file(${sqlString(path)}, 'RowBinary', ${sqlString(structure)})`;
    return this.run(`INSERT INTO ${table} FORMAT RowBinary`, async () => {
      await writeFile(path, rows);
      try {
        await this.session.queryAsync(sql);
      } finally {
        await unlink(path).catch(() => undefined);
      }
    });
  }

  async queryJsonEachRow<T>(sql: string): Promise<T[]> {
    return this.run(sql, async () => {
      const text = (await this.session.queryAsync(sql, { format: 'JSONEachRow' })).text();
      const rows: T[] = [];
      for (const line of text.split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line) as T);
      return rows;
    });
  }

  async ping(): Promise<void> {
    await this.queryJsonEachRow<{ ok: number }>('SELECT 1 AS ok');
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.tail; // let issued statements finish; run() refuses new ones from now on
      this.session.close();
      await this.chdb.drainPending();
    })();
    return this.closing;
  }

  private run<R>(sql: string, op: () => Promise<R>): Promise<R> {
    if (this.closing) {
      return Promise.reject(new OlapError(`chdb executor at ${this.directory} is closed`, 'chdb', undefined));
    }
    const result = this.tail.then(op).catch((e: unknown) => {
      throw toOlapError(e, sql);
    });
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** chdb errors read `Code: 60. DB::Exception: <text>. (UNKNOWN_TABLE) (version 26.7.2.1)`, sometimes twice over. */
function toOlapError(error: unknown, sql: string): OlapError {
  if (error instanceof OlapError) return error;
  const err = error instanceof Error ? error : new Error(String(error));
  const raw = (err as { clickhouseCode?: unknown }).clickhouseCode;
  const fromMessage = /Code:\s*(\d+)/.exec(err.message);
  const code = typeof raw === 'number' ? raw : fromMessage ? Number(fromMessage[1]) : undefined;
  const text = err.message
    .replace(/^(?:\s*Code:\s*\d+\.\s*DB::Exception:\s*)+/, '')
    .replace(/\s*\(version [^)]*\)/g, '')
    .trim();
  const prefix = code === undefined ? 'chdb error' : `chdb error ${code}`;
  return new OlapError(`${prefix} on "${statementHead(sql)}": ${text}`, 'chdb', code, { cause: err });
}
