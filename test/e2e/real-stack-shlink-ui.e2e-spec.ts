import { API_KEY, useRealStackApps } from './support';
import { describeShlinkUiJourney } from './shlink-ui-journey';

/** Shlink's own web UI on the real stack: generation, redirect and analytics as processes on MariaDB, Redis Cluster, Kafka and ClickHouse. */
describe('real stack: Shlink’s web UI', () => {
  const stack = useRealStackApps('shlink-ui', { olap: 'clickhouse' });
  describeShlinkUiJourney(
    () => stack().endpoints,
    async () => API_KEY,
  );
});
