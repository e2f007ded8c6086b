import { createConnection } from 'mysql2/promise';
import { requireEnv } from '@shortlink/testing';
import { App, startApp } from '@shortlink/harness';
import { SecretBox } from '@shortlink/people-domain';
import { describeSsoAddressJourney, IssuerWriter, SSO_ADDRESS_ENV } from './sso-addresses-journey';
import { describeSsoJourney, OidcTestProvider, SSO_ENV } from './sso-journey';
import { API_KEY, SERVER_SECRETS, SHARED_META_JOBS_OFF } from './support';

/**
 * Single sign-on on the real stack: two generation instances over MariaDB (the SSO
 * settings, members and sessions) and Redis Cluster, against a real OpenID provider started here;
 * a sign-in started on one instance ends on the other. Where it may connect, on a third instance that
 * does not allow insecure issuers (the start caps in Redis; an internal issuer written into the
 * meta database past the API).
 */
describe('real stack: single sign-on with OpenID Connect on two generation instances', () => {
  const apps: App[] = [];
  let strict: App;
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
      ...SHARED_META_JOBS_OFF,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
    };
    apps.push(await startApp('generation', { ...env, ...SSO_ENV }));
    apps.push(await startApp('generation', { ...env, ...SSO_ENV }));
    strict = await startApp('generation', { ...env, ...SSO_ADDRESS_ENV });
    apps.push(strict);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await provider?.stop();
  });

  describeSsoJourney(
    () => [apps[0].base, apps[1].base],
    () => provider,
  );

  /** The row as MysqlSsoStore writes it, the secret sealed with the stack's code secret. */
  const writeIssuer: IssuerWriter = async (tenantId, issuer) => {
    const conn = await createConnection(process.env.MYSQL_META_URL!);
    try {
      const sealed = new SecretBox(SERVER_SECRETS.SHORTLINK_CODE_SECRET, 'sso v1').seal(tenantId, 'a client secret');
      await conn.query(
        `INSERT INTO tenant_sso (tenant_id, issuer, client_id, client_secret, allowed_domains, default_role, created_at, updated_at)
         VALUES (?, ?, 'shortlink', ?, '["example.com"]', 'viewer', NOW(3), NOW(3))
         ON DUPLICATE KEY UPDATE issuer = VALUES(issuer), client_secret = VALUES(client_secret), updated_at = VALUES(updated_at)`,
        [tenantId, issuer, sealed],
      );
    } finally {
      await conn.end();
    }
  };
  describeSsoAddressJourney(
    () => strict.base,
    () => writeIssuer,
  );
});
