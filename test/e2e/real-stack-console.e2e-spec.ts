import { requireEnv } from '@shortlink/testing';
import { App, startApp } from '@shortlink/harness';
import { describeConsoleJourney } from './console-journey';
import { API_KEY, SERVER_SECRETS } from './support';

/** Issue 21 on the real stack: the console served by a generation app over MariaDB, Redis Cluster and Kafka, and the analytics app it links to. */
describe('real stack: the console', () => {
  let app: App;
  let analytics: App;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    const env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
      // SSO to a provider on 127.0.0.1 (http); its callback and the console it returns to stay at their defaults (localhost).
      SSO_ALLOW_INSECURE_ISSUERS: 'true',
    };
    // The analytics app the console links to (its dashboard takes the console's session).
    analytics = await startApp('analytics', env);
    app = await startApp('generation', { ...env, SHORTLINK_ANALYTICS_URL: analytics.base });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await analytics?.stop();
  });

  describeConsoleJourney(() => app.base);
});
