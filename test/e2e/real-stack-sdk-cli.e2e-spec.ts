import { allocateEndpoints, Endpoints, RunningProcess, startProcess, waitHealthy } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { API_KEY, SERVER_SECRETS } from './support';
import { describeSdkCliJourney } from './sdk-cli-journey';

/** The SDK and the `shortlink` CLI against a generation process on the real stack of `npm run stack:up` (MariaDB shards, Redis Cluster, Kafka). */
describe('real stack: SDK and CLI', () => {
  let generation: RunningProcess;
  let endpoints: Endpoints;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS']) requireEnv(name);
    const allocated = await allocateEndpoints();
    const run = Date.now().toString(36);
    generation = startProcess('apps/generation/src/main.ts', {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      ...allocated.env,
      ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      LOG_LEVEL: 'warn',
      KAFKA_CLICK_TOPIC: `shortlink.clicks.e2e-sdk.${run}`,
      SHORTLINK_PUBLIC_BASE_URL: `http://sdk-${run}.e2e.test`,
    });
    await waitHealthy(allocated.endpoints.generation, generation);
    endpoints = allocated.endpoints;
  });

  afterAll(async () => {
    await generation?.stop();
  });

  describeSdkCliJourney(() => endpoints);
});
