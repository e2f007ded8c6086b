import { createTenant, useRealStackApps } from './support';
import { describeStreamJourney } from './stream-journey';

/**
 * Live click stream on the real stack: generation, redirect and analytics as processes on
 * the MariaDB meta database and shards, Redis Cluster and Kafka (a click topic named per run, read by
 * the analytics instance's own live group, and a conversions topic likewise). Analytics keeps its rollups in chdb in a temporary
 * directory: the stream does not read them.
 */
describe('real stack: live click stream', () => {
  const stack = useRealStackApps('stream', {
    olap: 'chdb',
    shared: {
      ANALYTICS_STREAM_REPLAY_EVENTS: '5',
      ANALYTICS_STREAM_MAX_PER_TENANT: '4',
      // Leads and sales on a conversions topic of this run, read by the instance's own live group.
      KAFKA_CONVERSIONS_TOPIC: `shortlink.conversions.e2e-stream-${Date.now().toString(36)}`,
    },
  });
  describeStreamJourney(
    () => stack().endpoints,
    () => createTenant(stack().endpoints),
  );
});
