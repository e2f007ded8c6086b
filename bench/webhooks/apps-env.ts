import { serverSecrets } from '@shortlink/harness';

/**
 * The settings of the generation and analytics apps in the webhook benches: the real stack, the
 * Kafka bus with topics and consumer groups of this run only (`run`), the deliverer allowed to
 * reach the bench's receiver on 127.0.0.1, plans lifted so no create is refused.
 */
export function webhookBenchEnv(run: string, dataDir: string, apiKey: string): Record<string, string> {
  return {
    DB_DRIVER: 'mysql',
    CACHE_DRIVER: 'redis',
    BUS_DRIVER: 'kafka',
    OLAP_DRIVER: 'chdb',
    SHORTLINK_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    SHORTLINK_BOOTSTRAP_API_KEY: apiKey,
    ...serverSecrets(),
    SHORTLINK_PUBLIC_BASE_URL: 'http://bench.shortlink.test',
    PLAN_PAID_REQUESTS_PER_MINUTE: '100000000',
    KAFKA_CLICK_TOPIC: `shortlink.clicks.${run}`,
    KAFKA_CONSUMER_GROUP: `${run}.analytics`,
    KAFKA_EVENTS_TOPIC: `shortlink.events.${run}`,
    KAFKA_WEBHOOK_CONSUMER_GROUP: `${run}.webhooks`,
    WEBHOOK_ALLOW_PRIVATE: 'true',
  };
}
