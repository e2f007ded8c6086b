/**
 * The few operations the OLAP stores need, over either engine: a ClickHouse server (18.16 and
 * later, over HTTP) or chdb in process. SQL handed to an executor must run on both engines
 * (docs/design.md, "ClickHouse 18.16 and chdb"); engine differences stay inside the executors.
 * Statements carry no FORMAT clause (the executor adds it) and qualify every table with its
 * database. Rows come back parsed from JSONEachRow with 64-bit integers quoted, i.e. as
 * decimal strings on both engines (UInt32 and smaller stay JSON numbers).
 */
export interface OlapExecutor {
  /** Runs a statement that returns no rows (DDL, INSERT ... SELECT). */
  command(sql: string): Promise<void>;
  /** Inserts rows in one INSERT ... FORMAT JSONEachRow; `table` is `database.table`. No rows: no-op. */
  insertJsonEachRow(table: string, rows: readonly object[]): Promise<void>;
  /**
   * Inserts rows already encoded in RowBinary (row-binary.ts), the values of each row in the order of
   * `columns`, in one insert; `table` is `database.table`. No bytes: no-op.
   */
  insertRowBinary(table: string, columns: readonly OlapColumn[], rows: Buffer): Promise<void>;
  /** Runs a SELECT and returns its rows; 64-bit integers as decimal strings. */
  queryJsonEachRow<T>(sql: string): Promise<T[]>;
  /** Resolves when the engine answers a trivial query, rejects otherwise. */
  ping(): Promise<void>;
  /** Releases the connection or session; later calls reject. Idempotent. */
  close(): Promise<void>;
}

/** A column of a RowBinary insert: its name and its ClickHouse type. */
export interface OlapColumn {
  readonly name: string;
  readonly type: string;
}

const COLUMN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Types as the migrations spell them: a name, maybe with arguments of letters, digits, quotes, commas. */
const COLUMN_TYPE = /^[A-Za-z][A-Za-z0-9]*(\([A-Za-z0-9_', ()]*\))?$/;

/** The column list of an INSERT, checked: the names and types go into SQL text. */
export function columnNames(columns: readonly OlapColumn[]): string {
  if (columns.length === 0) throw new TypeError('a RowBinary insert needs its columns');
  for (const c of columns) {
    if (!COLUMN_NAME.test(c.name) || !COLUMN_TYPE.test(c.type)) throw new TypeError(`not a plain column: ${JSON.stringify(c)}`);
  }
  return columns.map((c) => c.name).join(', ');
}

/** A failed OLAP statement, with the engine's error code when it gave one. */
export class OlapError extends Error {
  override readonly name = 'OlapError';
  constructor(
    message: string,
    readonly engine: 'clickhouse' | 'chdb',
    /** ClickHouse error code (e.g. 62 syntax error, 60 unknown table), when known. */
    readonly clickhouseCode: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `db.table`, both parts plain identifiers: the only table names an executor accepts. */
const QUALIFIED_TABLE = /^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$/;

export function assertQualifiedTable(table: string): void {
  if (!QUALIFIED_TABLE.test(table)) {
    throw new TypeError(`OLAP table must be given as database.table with plain identifiers, got ${JSON.stringify(table)}`);
  }
}

/** First line of a statement, shortened, to say in an error which statement failed. */
export function statementHead(sql: string): string {
  const line = sql.trim().split('\n', 1)[0];
  return line.length > 120 ? line.slice(0, 117) + '...' : line;
}
