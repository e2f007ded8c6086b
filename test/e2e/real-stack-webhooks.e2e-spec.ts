import { App, startApp } from '@shortlink/harness';
import { createTenant, useRealStackApps } from './support';
import { describeWebhookJourney, describeWebhookRefusals } from './webhooks-journey';

/**
 * Webhooks on the real stack: generation, redirect and analytics as processes on the
 * MariaDB meta database and shards, Redis Cluster and Kafka (the events topic and the click topic,
 * each read by the deliverer's own consumer group, named per run). Analytics keeps its rollups in
 * chdb in a temporary directory: the webhooks do not read them.
 */
describe('real stack: webhooks', () => {
  const stack = useRealStackApps('webhooks', {
    olap: 'chdb',
    apps: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_RETRY_MAX_MS: '1000' },
  });
  const endpoints = () => stack().endpoints;
  let strict: App;

  // A generation instance with the default (no private receivers), beside the ones the journey uses.
  beforeAll(async () => {
    strict = await startApp('generation', stack().shared);
  }, 60_000);

  afterAll(async () => {
    await strict?.stop();
  });

  describe('without WEBHOOK_ALLOW_PRIVATE', () => {
    describeWebhookRefusals(
      () => strict.base,
      () => createTenant(endpoints()),
    );
  });

  describeWebhookJourney(endpoints, () => createTenant(endpoints()));
});
