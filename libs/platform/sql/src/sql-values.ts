/** A time as the drivers read it: a Date (MySQL DATETIME), epoch ms (SQLite) or its decimal string. */
export const toDate = (v: Date | number | string): Date => (v instanceof Date ? v : new Date(typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v));

/** Runs one statement: rows of a SELECT, the count of rows an UPDATE/DELETE matched. */
export interface SqlExecutor {
  select<T>(sql: string, params: readonly unknown[]): Promise<T[]>;
  change(sql: string, params: readonly unknown[]): Promise<number>;
}

/** What differs between the two meta databases: how a time is written, how a duplicate insert is skipped. */
export interface SqlDialect {
  readonly time: (d: Date) => unknown;
  readonly insertIgnore: string;
}
