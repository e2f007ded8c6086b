import { allocateEndpoints, Endpoints, RunningProcess, startProcess, waitHealthy } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { API_KEY, SERVER_SECRETS } from './support';
import { describeTransferJourney } from './transfer-journey';

/**
 * Two installations on the real stack of `npm run stack:up` (generation and redirect processes each,
 * against the MariaDB shards, Redis Cluster and Kafka): each its own default domain, new on every run,
 * so the legacy codes of this run (`1`, `zz`, …) are free on both.
 */
describe('real stack: export and import between installations', () => {
  const processes: RunningProcess[] = [];
  const installations: Endpoints[] = [];

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS']) requireEnv(name);
    const run = Date.now().toString(36);
    for (const name of ['a', 'b']) {
      const allocated = await allocateEndpoints();
      const env = {
        DB_DRIVER: 'mysql',
        CACHE_DRIVER: 'redis',
        BUS_DRIVER: 'kafka',
        ...allocated.env,
        ...SERVER_SECRETS,
        SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
        LOG_LEVEL: 'warn',
        KAFKA_CLICK_TOPIC: `shortlink.clicks.e2e-transfer.${run}`,
        SHORTLINK_PUBLIC_BASE_URL: `http://${name}-${run}.transfer.e2e.test`,
      };
      const generation = startProcess('apps/generation/src/main.ts', env);
      const redirect = startProcess('apps/redirect/src/main.ts', env);
      processes.push(generation, redirect);
      await Promise.all([waitHealthy(allocated.endpoints.generation, generation), waitHealthy(allocated.endpoints.redirect, redirect)]);
      installations.push(allocated.endpoints);
    }
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
  });

  describeTransferJourney(() => ({ source: installations[0], target: installations[1] }));
});
