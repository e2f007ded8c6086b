import { createTenant, useRealStackApps } from './support';
import { describeConversionsJourney } from './conversions-journey';
import { describeTagTrackingJourney } from './tag-tracking-journey';

/**
 * Conversions on the real stack: generation, redirect and analytics as processes on the MariaDB
 * meta database and shards, Redis Cluster, Kafka (a conversions topic named per run, read by the
 * run's analytics group) and ClickHouse 18.16 (a database per run).
 */
describe('real stack: conversions', () => {
  const run = Date.now().toString(36);
  const stack = useRealStackApps('conversions', {
    olap: 'clickhouse',
    shared: {
      KAFKA_CONVERSIONS_TOPIC: `shortlink.conversions.e2e-${run}`,
      CONVERSION_METADATA_MAX_BYTES: '1024',
      PLAN_FREE_CONVERSIONS_PER_MONTH: '3',
      PLAN_FREE_CONVERSION_METADATA_BYTES: '64',
    },
    apps: { WEBHOOK_ALLOW_PRIVATE: 'true' },
  });
  describeConversionsJourney(
    () => stack().endpoints,
    (plan) => createTenant(stack().endpoints, plan),
  );
  describeTagTrackingJourney(
    () => stack().endpoints,
    () => createTenant(stack().endpoints),
  );
});
