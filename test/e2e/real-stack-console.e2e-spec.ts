import { requireEnv } from '@shortlink/testing';
import { App, startApp } from '@shortlink/harness';
import { describeConsoleJourney } from './console-journey';
import { API_KEY, SERVER_SECRETS } from './support';

/** Issue 21 on the real stack: the console served by a generation app over MariaDB, Redis Cluster and Kafka. */
describe('real stack: the console', () => {
  let app: App;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    app = await startApp('generation', {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
    });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
  });

  describeConsoleJourney(() => app.base);
});
