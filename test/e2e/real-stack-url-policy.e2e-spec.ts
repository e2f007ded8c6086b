import { requireEnv } from '@shortlink/testing';
import { App, startApp } from '@shortlink/harness';
import { API_KEY, SERVER_SECRETS } from './support';
import { describeUrlPolicyJourney } from './url-policy-journey';

/**
 * Domain and URL-policy items on the real stack: two generation instances on the MariaDB
 * meta database and shards; a tenant domain added through one is refused as a target by the other
 * within REDIRECT_TENANT_REFRESH_MS.
 */
describe('real stack: domains and the URL policy across two generation instances', () => {
  const apps: App[] = [];

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    const env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'memory',
      OLAP_DRIVER: 'chdb',
      LOG_LEVEL: 'warn',
      ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
    };
    apps.push(await startApp('generation', env));
    apps.push(await startApp('generation', env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
  });

  describeUrlPolicyJourney(
    () => apps[0].base,
    () => apps[1].base,
  );
});
