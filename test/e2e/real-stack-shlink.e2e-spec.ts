import { createTenant, useRealStackApps } from './support';
import { describeShlinkJourney } from './shlink-journey';

/**
 * Shlink REST v3 on the real stack: generation, redirect and analytics as processes on
 * MariaDB, Redis Cluster, Kafka and ClickHouse (a database of this run). The generation app reads
 * raw visits and click counts from ClickHouse itself (the olap-reader port, not critical).
 */
describe('real stack: Shlink REST v3', () => {
  const stack = useRealStackApps('shlink', { olap: 'clickhouse' });
  describeShlinkJourney(
    () => stack().endpoints,
    () => createTenant(stack().endpoints),
  );
});
