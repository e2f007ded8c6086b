import { App, startApp } from '@shortlink/harness';
import { realStackEnv } from './support';
import { describeVisitorPages } from './visitor-pages-journey';

/**
 * On the real stack: one generation and two redirect instances on the MariaDB meta
 * database and shards and the Redis Cluster; a domain's settings reach both redirect instances over
 * Redis pub/sub within the bound of link edits.
 */
describe('real stack: pages for visitors and domain settings on two redirect instances', () => {
  const RUN = Date.now().toString(36);
  const DEFAULT_DOMAIN = `pages-${RUN}.shortlink.test`;
  const apps: App[] = [];

  beforeAll(async () => {
    const env = realStackEnv({ SHORTLINK_DEFAULT_DOMAIN: DEFAULT_DOMAIN, SHORTLINK_PUBLIC_BASE_URL: `http://${DEFAULT_DOMAIN}` });
    apps.push(await startApp('generation', env));
    apps.push(...(await Promise.all([startApp('redirect', env), startApp('redirect', env)])));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
  });

  describeVisitorPages(() => ({ generation: apps[0].base, redirects: [apps[1].base, apps[2].base], defaultDomain: DEFAULT_DOMAIN }), {
    screenshots: false,
    run: RUN,
  });
});
