import { App, startApp } from '@shortlink/harness';
import { describeLeaksJourney, LEAKS_SETTINGS } from './leaks-journey';
import { useRealStackApps } from './support';

/**
 * The smaller leaks between tenants on the real stack: generation, analytics and two redirect
 * instances over the MariaDB shards, Redis Cluster (the scan windows every redirect shares) and
 * Kafka (the click topic the analytics instance streams from); rollups in ClickHouse. Visits go
 * to the two redirects in turn.
 */
describe('real stack: smaller leaks between tenants (two redirect instances)', () => {
  // Every process agrees on the links' domain whatever its port.
  const stack = useRealStackApps('leaks', { olap: 'clickhouse', shared: { ...LEAKS_SETTINGS, SHORTLINK_PUBLIC_BASE_URL: 'http://leaks-e2e.shortlink.test' } });
  let second: App;

  beforeAll(async () => {
    second = await startApp('redirect', stack().shared);
  }, 60_000);

  afterAll(async () => {
    await second?.stop();
  });

  describeLeaksJourney(() => ({ endpoints: stack().endpoints, redirects: [stack().endpoints.redirect, second.base] }));
});
