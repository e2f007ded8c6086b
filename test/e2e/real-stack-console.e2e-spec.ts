import { describeConsoleJourney } from './console-journey';
import { useRealStackApps } from './support';

/**
 * Issue 21 on the real stack: the console served by a generation app over MariaDB, Redis Cluster
 * and Kafka; the redirect app its links are clicked on; the analytics app (ClickHouse) whose
 * dashboard it links to and whose query API and click stream its Analytics screen reads through
 * the generation app's relay (a click topic, consumer group and database of this run's own).
 */
describe('real stack: the console', () => {
  const stack = useRealStackApps('console', { olap: 'clickhouse' });
  describeConsoleJourney(
    () => stack().endpoints.generation,
    () => stack().endpoints.redirect,
  );
});
