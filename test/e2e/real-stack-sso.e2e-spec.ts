import { requireEnv } from '@shortlink/testing';
import { App, startApp } from '@shortlink/harness';
import { describeSsoJourney, OidcTestProvider, SSO_ENV } from './sso-journey';
import { API_KEY, SERVER_SECRETS } from './support';

/**
 * Single sign-on on the real stack: two generation instances over MariaDB (the SSO
 * settings, members and sessions) and Redis Cluster, against a real OpenID provider started here;
 * a sign-in started on one instance ends on the other.
 */
describe('real stack: single sign-on with OpenID Connect on two generation instances', () => {
  const apps: App[] = [];
  let provider: OidcTestProvider;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    provider = await OidcTestProvider.start();
    const env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
      ...SSO_ENV,
    };
    apps.push(await startApp('generation', env));
    apps.push(await startApp('generation', env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await provider?.stop();
  });

  describeSsoJourney(
    () => [apps[0].base, apps[1].base],
    () => provider,
  );
});
