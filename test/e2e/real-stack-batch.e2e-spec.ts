import { allocateEndpoints, Endpoints, RunningProcess, startProcess, waitHealthy } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { API_KEY, createTenant, SERVER_SECRETS } from './support';
import { crashAndRetry, describeBatchJourney } from './batch-journey';

/**
 * Batch creation on the real stack of `npm run stack:up`: the generation and redirect apps as
 * processes against the MariaDB shards and meta database, Redis Cluster and Kafka.
 */
describe('real stack: batch creation', () => {
  let generation: RunningProcess;
  let redirect: RunningProcess;
  let endpoints: Endpoints;
  let env: Record<string, string>;

  const startGeneration = async () => {
    generation = startProcess('apps/generation/src/main.ts', env);
    await waitHealthy(endpoints.generation, generation);
  };

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS']) requireEnv(name);
    const allocated = await allocateEndpoints();
    endpoints = allocated.endpoints;
    const topic = `shortlink.clicks.e2e-batch.${Date.now().toString(36)}`;
    env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      ...allocated.env,
      ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      LOG_LEVEL: 'warn',
      KAFKA_CLICK_TOPIC: topic,
      SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
      // See the embedded spec: the shared cache is what a bulk edit must have updated; the crash test's lease.
      REDIRECT_L1_TTL_MS: '1000',
      BATCH_LEASE_MS: '2000',
    };
    await startGeneration();
    redirect = startProcess('apps/redirect/src/main.ts', env);
    await waitHealthy(endpoints.redirect, redirect);
  });

  afterAll(async () => {
    await Promise.all([generation?.stop(), redirect?.stop()]);
  });

  describeBatchJourney(
    () => endpoints,
    async () => (await createTenant(endpoints)).apiKey,
  );

  it('answers the same batch after the generation process was SIGKILLed in the middle of it, every row created once on the shards', async () => {
    const { apiKey } = await createTenant(endpoints);
    await crashAndRetry({
      base: () => endpoints.generation,
      apiKey,
      rows: 20_000,
      killAfterLines: 6000,
      kill: () => process.kill(generation.pid, 'SIGKILL'),
      restart: async () => {
        await generation.exited;
        await startGeneration();
      },
    });
  });
});
