import { CLICK_STATS_READER } from '@shortlink/clicks-domain';
import { ClickHouseExecutor, SqlClickAggregateStore } from '@shortlink/olap';
import { itself, portSpec } from '../port';

/**
 * The click aggregates for reading from an app that does not own them (the generation app's
 * compatibility APIs): a ClickHouse server is reached over HTTP, lazily, without migrating (the
 * analytics app does), its health probe not critical (the generation app stays up while ClickHouse
 * is down; the counts answer zero and Shlink's visits 503 then). chdb lives inside the analytics
 * process: null (the embedded launcher hands its shared store to the compatibility APIs instead).
 */
export const olapReaderPort = portSpec({
  name: 'olap-reader',
  open: (config): SqlClickAggregateStore | null => {
    const olap = config.olap;
    if (olap.driver !== 'clickhouse') return null;
    return new SqlClickAggregateStore(new ClickHouseExecutor({ url: olap.url, username: olap.username, password: olap.password }), olap.database);
  },
  provides: [[CLICK_STATS_READER, itself]],
  close: async (store) => store?.close(),
  probes: (store) => (store ? [{ name: 'olap-reader', critical: false, check: () => store.ping() }] : []),
});
