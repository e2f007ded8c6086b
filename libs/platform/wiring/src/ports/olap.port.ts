import { join } from 'path';
import { CLICK_AGGREGATE_STORE } from '@shortlink/clicks-domain';
import { ChdbExecutor, ClickHouseExecutor, SqlClickAggregateStore } from '@shortlink/olap';
import { itself, portSpec } from '../port';

/**
 * The chdb stores this process opened, by directory: libchdb binds one data directory per process,
 * so another port of the same process that reads them (olap-reader) borrows the open one.
 */
export const openChdbStores = new Map<string, SqlClickAggregateStore>();
export const chdbDirectoryOf = (dataDir: string) => join(dataDir, 'chdb');

/** Click aggregates: a ClickHouse server, or chdb in process; migrated when opened. */
export const olapPort = portSpec({
  name: 'olap',
  open: async (config) => {
    const olap = config.olap;
    const directory = chdbDirectoryOf(config.runtime.dataDir);
    const executor =
      olap.driver === 'clickhouse' ? new ClickHouseExecutor({ url: olap.url, username: olap.username, password: olap.password }) : new ChdbExecutor(directory);
    const store = new SqlClickAggregateStore(executor, olap.database);
    await store.migrate();
    if (olap.driver === 'chdb') openChdbStores.set(directory, store);
    return store;
  },
  provides: [[CLICK_AGGREGATE_STORE, itself]],
  close: async (store) => {
    for (const [directory, open] of openChdbStores) if (open === store) openChdbStores.delete(directory);
    await store.close();
  },
  probes: (store) => [{ name: 'olap', check: () => store.ping() }],
});
