import { join } from 'path';
import { CLICK_AGGREGATE_STORE } from '@shortlink/clicks-domain';
import { ChdbExecutor, ClickHouseExecutor, SqlClickAggregateStore } from '@shortlink/olap';
import { itself, portSpec } from '../port';

/** Click aggregates: a ClickHouse server, or chdb in process; migrated when opened. */
export const olapPort = portSpec({
  name: 'olap',
  open: async (config) => {
    const olap = config.olap;
    const executor =
      olap.driver === 'clickhouse'
        ? new ClickHouseExecutor({ url: olap.url, username: olap.username, password: olap.password })
        : new ChdbExecutor(join(config.runtime.dataDir, 'chdb'));
    const store = new SqlClickAggregateStore(executor, olap.database);
    await store.migrate();
    return store;
  },
  provides: [[CLICK_AGGREGATE_STORE, itself]],
  close: (store) => store.close(),
  probes: (store) => [{ name: 'olap', check: () => store.ping() }],
});
