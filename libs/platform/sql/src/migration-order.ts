/**
 * One database's migrations from the lists of the contexts that keep tables in it, in the order they
 * run: by the sequence each name carries (a MySQL migration's 13-digit timestamp, a SQLite one's
 * number prefix), each list already in that order. A migration runs once per database and is recorded
 * by its name, so the order a database was migrated in is the order a new one is (docs/design.md, "Migrations").
 */
export function inMigrationOrder<M>(lists: ReadonlyArray<readonly M[]>, sequenceOf: (migration: M) => string): M[] {
  const all = lists.flat();
  const sequences = new Map(all.map((m) => [m, sequenceOf(m)]));
  if (new Set(sequences.values()).size !== all.length) throw new Error('two migrations of one database share a sequence');
  return all.sort((a, b) => compareSequences(sequences.get(a)!, sequences.get(b)!));
}

const compareSequences = (a: string, b: string): number => (a.length === b.length ? (a < b ? -1 : a > b ? 1 : 0) : a.length - b.length);

/** The timestamp at the end of a MySQL migration's name (TypeORM runs them in that order). */
export const mysqlSequence = (migration: new () => { name?: string }): string => /(\d{13})$/.exec(new migration().name ?? '')?.[1] ?? '';

/** The number at the start of a SQLite migration's name. */
export const sqliteSequence = (migration: { name: string }): string => /^(\d+)_/.exec(migration.name)?.[1] ?? '';
