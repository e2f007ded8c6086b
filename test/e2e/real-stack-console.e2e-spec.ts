import { describeConsoleJourney } from './console-journey';
import { useRealStackApps } from './support';

/**
 * The console on the real stack: the console served by a generation app over MariaDB, Redis Cluster
 * and Kafka; the redirect app its links are clicked on; the analytics app (ClickHouse) whose
 * dashboard it links to and whose query API and click stream its Analytics screen reads through
 * the generation app's relay (a click topic, consumer group and database of this run's own).
 */
describe('real stack: the console', () => {
  // SSO to a provider on 127.0.0.1 (http); its callback and the console it returns to stay at their defaults (localhost).
  // The test's own requests may say where a sign-in came from (a proxy of ours on 127.0.0.1).
  const stack = useRealStackApps('console', { olap: 'clickhouse', apps: { SSO_ALLOW_INSECURE_ISSUERS: 'true', TRUSTED_PROXIES: '127.0.0.1' } });
  describeConsoleJourney(
    () => stack().endpoints.generation,
    () => stack().endpoints.redirect,
    { generationOutput: () => stack().output('generation') },
  );
});
