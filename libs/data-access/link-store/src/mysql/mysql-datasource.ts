import { DataSource, MigrationInterface } from 'typeorm';

export interface MysqlConnectionOptions {
  /** mysql://user:password@host:port/database */
  readonly url: string;
  readonly poolSize?: number;
  readonly connectTimeoutMs?: number;
}

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
    migrations,
    migrationsTableName,
    migrationsTransactionMode: 'each',
    logging: false,
    // Fail fast instead of queueing without bound when the shard is saturated or down.
    extra: { waitForConnections: true, queueLimit: 1000, enableKeepAlive: true },
  });
  await ds.initialize();
  await ds.runMigrations();
  return ds;
}

export const isMysqlDuplicate = (error: unknown): boolean => {
  const e = error as { code?: string; errno?: number; driverError?: { code?: string; errno?: number } };
  return e?.code === 'ER_DUP_ENTRY' || e?.errno === 1062 || e?.driverError?.code === 'ER_DUP_ENTRY' || e?.driverError?.errno === 1062;
};
