import { createHash } from 'node:crypto';
import { DataSource, MigrationInterface } from 'typeorm';

/** A MySQL database opened by openMysql (a TypeORM DataSource over a mysql2 pool). */
export type MysqlDb = DataSource;

export interface MysqlConnectionOptions {
  /** mysql://user:password@host:port/database */
  readonly url: string;
  readonly poolSize?: number;
  readonly connectTimeoutMs?: number;
  /**
   * Lets one query carry several statements, so a transaction goes to the server in one round trip
   * (docs/design.md, "Group commit"). Only pools whose writers build every statement with placeholders.
   */
  readonly multipleStatements?: boolean;
}

/** How long an opening process waits for another one's migrations before it gives up. */
const MIGRATION_LOCK_WAIT_SECONDS = 120;

/** One typeorm DataSource (a mysql2 pool) per database, running its migrations on first open. */
export async function openMysql(
  options: MysqlConnectionOptions,
  migrations: Array<new () => MigrationInterface>,
  migrationsTableName: string,
): Promise<DataSource> {
  const ds = new DataSource({
    type: 'mysql',
    url: options.url,
    connectorPackage: 'mysql2',
    poolSize: options.poolSize ?? 10,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: false,
    timezone: 'Z',
    charset: 'utf8mb4',
    multipleStatements: options.multipleStatements ?? false,
    migrations,
    migrationsTableName,
    migrationsTransactionMode: 'each',
    logging: false,
    // Fail fast instead of queueing without bound when the shard is saturated or down.
    extra: { waitForConnections: true, queueLimit: 1000, enableKeepAlive: true },
  });
  await ds.initialize();
  try {
    await runMigrationsAlone(ds, migrationsTableName);
  } catch (error) {
    await ds.destroy().catch(() => undefined);
    throw error;
  }
  return ds;
}

/**
 * MySQL's DDL is not transactional, so two processes opening a new database at once (a reshard
 * adding a shard while the apps follow the ring) would both run the same ALTER and one would fail
 * half-way. A named server lock, held on one connection of the pool for the run, makes them take
 * turns; the second finds the migrations recorded and runs none (docs/design.md "Migrations").
 */
async function runMigrationsAlone(ds: DataSource, migrationsTableName: string): Promise<void> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    const [{ name: database }] = (await runner.query('SELECT DATABASE() AS name')) as Array<{ name: string | null }>;
    // GET_LOCK names are server-wide and at most 64 characters: a digest of database and table.
    const lock = `shortlink:migrate:${createHash('sha256')
      .update(`${database ?? ''}/${migrationsTableName}`)
      .digest('hex')
      .slice(0, 40)}`;
    const [{ got }] = (await runner.query('SELECT GET_LOCK(?, ?) AS got', [lock, MIGRATION_LOCK_WAIT_SECONDS])) as Array<{
      got: number | string | null;
    }>;
    if (Number(got) !== 1) {
      throw new Error(`migrations of ${database ?? '(no database)'}: another process held the migration lock for ${MIGRATION_LOCK_WAIT_SECONDS} s`);
    }
    try {
      await ds.runMigrations();
    } finally {
      await runner.query('SELECT RELEASE_LOCK(?)', [lock]).catch(() => undefined);
    }
  } finally {
    await runner.release();
  }
}

export const isMysqlDuplicate = (error: unknown): boolean => {
  const e = error as { code?: string; errno?: number; driverError?: { code?: string; errno?: number } };
  return e?.code === 'ER_DUP_ENTRY' || e?.errno === 1062 || e?.driverError?.code === 'ER_DUP_ENTRY' || e?.driverError?.errno === 1062;
};
