import { requireEnv } from '@shortlink/testing';
import { App, startApp } from '@shortlink/harness';
import { describePeopleJourney, Mailbox } from './people-journey';
import { API_KEY, SERVER_SECRETS, SHARED_META_JOBS_OFF } from './support';

/**
 * People on the real stack: two generation instances over MariaDB (members, sessions, the audit
 * log) and Redis Cluster (the sign-in throttle's windows), invitations mailed to a real SMTP server
 * started here. A removal or a role change on one instance is seen by the other within a second;
 * the analytics app takes the same sessions.
 */
describe('real stack: people and sessions on two generation instances', () => {
  const apps: App[] = [];
  let mailbox: Mailbox;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    mailbox = await Mailbox.start();
    const env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      ...SERVER_SECRETS,
      ...SHARED_META_JOBS_OFF,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
      SMTP_URL: mailbox.url,
      SIGN_IN_FAILURES_PER_ACCOUNT: '3',
    };
    apps.push(await startApp('generation', env));
    apps.push(await startApp('generation', env));
    apps.push(await startApp('analytics', env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await mailbox?.stop();
  });

  describePeopleJourney(
    () => [apps[0].base, apps[1].base],
    () => mailbox,
    () => apps[2].base,
  );
});
