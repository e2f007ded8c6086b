import { requireEnv } from '@shortlink/testing';
import { App, startApp } from '@shortlink/harness';
import { describeKeyAuthorityJourney } from './key-authority-journey';
import { API_KEY, SERVER_SECRETS } from './support';

/**
 * Keys within the role of their person (docs/design.md, "Security model") on the real stack: two
 * generation instances over MariaDB (keys, members, the audit log) and Redis Cluster; a demotion,
 * a removal or a hand-over made on one instance reaches the keys checked on the other within a second.
 */
describe('real stack: a key never outranks its person, on two generation instances', () => {
  const apps: App[] = [];

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
    };
    apps.push(await startApp('generation', env));
    apps.push(await startApp('generation', env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
  });

  describeKeyAuthorityJourney(() => [apps[0].base, apps[1].base]);
});
