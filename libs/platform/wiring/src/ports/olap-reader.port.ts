import { CLICK_STATS_READER } from '@shortlink/clicks-domain';
import { ClickHouseExecutor, SqlClickAggregateStore } from '@shortlink/olap';
import { portSpec } from '../port';
import { chdbDirectoryOf, openChdbStores } from './olap.port';

/**
 * The click aggregates and raw visits for reading from an app that does not own them (the
 * generation app's compatibility APIs): a ClickHouse server is reached over HTTP, lazily, without
 * migrating (the analytics app does), its probe not critical (the generation app stays up while
 * ClickHouse is down; counts answer zero and visits 503 then). chdb lives inside the process that
 * opened it: the embedded profile's shared olap port is borrowed, looked up at each call (the ports
 * open concurrently); in a process without it every read fails (visits 503, counts zero).
 */
export const olapReaderPort = portSpec({
  name: 'olap-reader',
  open: (config): { store: SqlClickAggregateStore | null; owned: boolean } => {
    const olap = config.olap;
    if (olap.driver !== 'clickhouse') return { store: borrowedChdbStore(chdbDirectoryOf(config.runtime.dataDir)), owned: false };
    const store = new SqlClickAggregateStore(new ClickHouseExecutor({ url: olap.url, username: olap.username, password: olap.password }), olap.database);
    return { store, owned: true };
  },
  provides: [[CLICK_STATS_READER, (value) => value.store]],
  close: async ({ store, owned }) => {
    if (owned) await store?.close();
  },
  probes: ({ store, owned }) => (store && owned ? [{ name: 'olap-reader', critical: false, check: () => store.ping() }] : []),
});

/** The chdb store another port of this process opened on `directory`, found when a method is called. */
function borrowedChdbStore(directory: string): SqlClickAggregateStore {
  return new Proxy({} as SqlClickAggregateStore, {
    get: (_target, property) => {
      if (property === 'then') return undefined; // not a promise: DI awaits what a factory returns
      const store = openChdbStores.get(directory);
      if (!store) return () => Promise.reject(new Error(`chdb at ${directory} is not open in this process (the analytics app holds it)`));
      const value = (store as unknown as Record<string | symbol, unknown>)[property];
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(store) : value;
    },
  });
}
