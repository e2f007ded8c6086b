import { randomInt, randomUUID } from 'crypto';
import { Kafka, logLevel } from 'kafkajs';
import { decodeClickRecord } from '@shortlink/bus';
import { ClickBuffer, ClickEvent } from '@shortlink/clicks-domain';
import { eventually, metric, metricsOf, sleep, total } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { AnalyticsRig, producerOf } from './analytics-rig';
import { createTenantInMeta, Outages, stack } from './support';

/**
 * Counts that analysts can trust, on the real stack (Kafka, ClickHouse 18.16, the meta
 * database): the analytics app as a child process consumes a topic of its own while the test
 * produces with the real producer, kills the consumer with SIGKILL, stops ClickHouse, and resends a
 * batch after an ambiguous failure. The truth is read straight from ClickHouse: clicks per tenant in
 * the minute, hour and day tables must equal what was produced, exactly. Loopback only; every wait
 * is bounded; ClickHouse is started again in a finally (and in afterAll as a net).
 */
describe('analytics counts exactly once on the real stack', () => {
  const RUN = Date.now().toString(36);
  const outages = new Outages();
  const measured: Record<string, unknown> = {};
  let rig: AnalyticsRig;

  /** Clicks of the tenant in each rollup table; all three must agree. */
  const counted = async (tenantId: string): Promise<number[]> =>
    Promise.all(
      ['minute', 'hour', 'day'].map(async (g) => {
        const rows = await rig.query<{ n: string | number }>(`SELECT sumMerge(clicks) AS n FROM ${rig.database}.link_${g} WHERE tenant_id = '${tenantId}'`);
        return Number(rows[0]?.n ?? 0);
      }),
    );
  const countedExactly = (tenantId: string, expected: number, timeoutMs: number) =>
    eventually(`${expected} clicks of ${tenantId} in every rollup`, async () => (await counted(tenantId)).every((n) => n === expected), timeoutMs, 250);

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'KAFKA_BROKERS', 'CLICKHOUSE_URL', 'STACK_SCRIPT']) requireEnv(name);
    await stack('status');
    rig = new AnalyticsRig('exactly-once');
    await rig.open();
  });

  afterAll(async () => {
    await rig?.stopApps();
    await outages.restoreAll();
    await rig?.close();
    console.log(`analytics exactly-once measurements: ${JSON.stringify({ ...measured, ...outages.timings })}`);
  });

  it('ends with exactly the events produced (200 000 and more) although the consumer was killed with SIGKILL 5 times, its 6 partitions in flight at once', async () => {
    const tenantId = `t-kill-${RUN}`;
    const next = producerOf(tenantId, 'exactly-once.test');
    const TOTAL = 200_000;
    const BATCH = 2_000;
    let consumer = await rig.startAnalytics();
    const t0 = Date.now();
    // The producer runs on its own, paced, while the consumer is killed and restarted: at least 200 000
    // events, and on until the last kill (a consumer keeps up with it: a member started after the
    // producer stopped would wait for work that never comes).
    let produced = 0;
    let killsDone = false;
    const producing = (async () => {
      while (produced < TOTAL || !killsDone) {
        await rig.sink.send(next(BATCH));
        produced += BATCH;
        await sleep(400);
      }
    })();
    const kills: Array<{ afterMs: number; consumedBefore: number; producedBefore: number }> = [];
    try {
      for (let k = 0; k < 5; k++) {
        // Let the new member join and consume for a random while, then kill it mid-flight.
        await eventually('the consumer aggregating', async () => metric(await metricsOf(consumer.admin), 'shortlink_analytics_events_total') > 0, 60_000, 100);
        await sleep(randomInt(200, 1500));
        const producedBefore = produced;
        const consumedBefore = (await counted(tenantId))[0];
        process.kill(consumer.proc.pid, 'SIGKILL');
        await consumer.proc.exited;
        rig.apps.splice(rig.apps.indexOf(consumer), 1);
        kills.push({ afterMs: Date.now() - t0, consumedBefore, producedBefore });
        consumer = await rig.startAnalytics();
      }
    } finally {
      killsDone = true;
      await producing;
    }
    expect(produced).toBeGreaterThanOrEqual(TOTAL);
    await countedExactly(tenantId, produced, 120_000);
    measured.killRun = { seconds: (Date.now() - t0) / 1000, produced, kills };
    // Kills landed while there was work to do: some counted, some produced and not counted yet.
    expect(kills.filter((k) => k.consumedBefore > 0 && k.consumedBefore < k.producedBefore).length).toBeGreaterThanOrEqual(3);
    // Nothing arrives late and twice.
    await sleep(2000);
    expect(await counted(tenantId)).toEqual([produced, produced, produced]);
  }, 420_000);

  it('pauses while ClickHouse is stopped for 60 s, loses nothing, and catches up', async () => {
    const tenantId = `t-outage-${RUN}`;
    const next = producerOf(tenantId, 'exactly-once.test');
    const consumer = rig.apps[rig.apps.length - 1] ?? (await rig.startAnalytics());
    await rig.sink.send(next(5_000));
    await countedExactly(tenantId, 5_000, 60_000);
    const lagBefore = total(await metricsOf(consumer.admin), 'shortlink_analytics_consumer_lag');
    const apiKey = await createTenantInMeta();
    await outages.stop('clickhouse');
    const stoppedAt = Date.now();
    try {
      for (let i = 0; i < 10; i++) await rig.sink.send(next(2_000));
      // The query API says so instead of failing with a 500.
      const res = await fetch(`${consumer.base}/api/v1/stats/top-links`, { headers: { 'x-api-key': apiKey } });
      expect({ status: res.status, code: ((await res.json()) as { code: string }).code }).toEqual({ status: 503, code: 'DEPENDENCY_UNAVAILABLE' });
      // The consumer holds its partitions and waits: the lag grows, the process stays up.
      await eventually(
        'the lag to show the waiting records',
        async () => total(await metricsOf(consumer.admin), 'shortlink_analytics_consumer_lag') > lagBefore,
        30_000,
        500,
      );
      await sleep(Math.max(0, 60_000 - (Date.now() - stoppedAt)));
      expect(consumer.proc.alive).toBe(true);
      measured.outageLag = total(await metricsOf(consumer.admin), 'shortlink_analytics_consumer_lag');
    } finally {
      await outages.start('clickhouse');
    }
    const back = Date.now();
    await countedExactly(tenantId, 25_000, 90_000);
    measured.outageCatchUpSeconds = (Date.now() - back) / 1000;
    await eventually('the lag back to 0', async () => total(await metricsOf(consumer.admin), 'shortlink_analytics_consumer_lag') === 0, 30_000, 500);
  }, 300_000);

  it('does not count twice what a producer resent after an ambiguous timeout', async () => {
    const tenantId = `t-resend-${RUN}`;
    const next = producerOf(tenantId, 'exactly-once.test');
    const consumer = rig.apps[rig.apps.length - 1] ?? (await rig.startAnalytics());
    // Kafka took the first send but its answer never came back (the ack was lost): the redirect's
    // buffer sees a failure, keeps the batch and sends it again with what arrived meanwhile.
    let ackLost = 1;
    const buffer = new ClickBuffer<ClickEvent>(
      {
        send: async (events) => {
          await rig.sink.send(events);
          if (ackLost-- > 0) throw new Error('request timed out after the broker had written the batch');
        },
      },
      // A backoff the test never waits out: the retry is its own step (close), not a race with the clock.
      { capacity: 10_000, batchSize: 10_000, flushIntervalMs: 60_000, retryBackoffMs: 600_000 },
    );
    // Read before anything is sent: the consumer may take the events the moment they land.
    const before = metric(await metricsOf(consumer.admin), 'shortlink_analytics_duplicate_events_skipped_total');
    for (const e of next(100)) buffer.push(e);
    await buffer.flush();
    expect(buffer.size).toBe(100);
    for (const e of next(50)) buffer.push(e);
    // Sends what is left at once, backoff or not (as the redirect does at shutdown): the kept 100 and the 50.
    await buffer.close();
    expect(buffer.size).toBe(0);
    // On the topic: the first 100 twice.
    const seen = await eventsOnTopic(tenantId, 250);
    expect(seen).toBe(250);
    await countedExactly(tenantId, 150, 60_000);
    await sleep(2000);
    expect(await counted(tenantId)).toEqual([150, 150, 150]);
    expect(metric(await metricsOf(consumer.admin), 'shortlink_analytics_duplicate_events_skipped_total') - before).toBe(100);
  }, 120_000);

  /** Events of the tenant on the topic, read with a consumer group of its own. */
  async function eventsOnTopic(tenantId: string, expected: number): Promise<number> {
    const kafka = new Kafka({ brokers: requireEnv('KAFKA_BROKERS').split(','), clientId: 'exactly-once-probe', logLevel: logLevel.NOTHING });
    const probe = kafka.consumer({ groupId: `exactly-once-probe-${randomUUID()}`, maxWaitTimeInMs: 200 });
    let n = 0;
    await probe.connect();
    await probe.subscribe({ topics: [rig.topic], fromBeginning: true });
    await probe.run({
      eachMessage: async ({ message }) => {
        const events = decodeClickRecord(message.value);
        if (typeof events !== 'string') n += events.filter((e) => e.tenantId === tenantId).length;
      },
    });
    try {
      await eventually(`${expected} events of ${tenantId} on the topic`, async () => n >= expected, 30_000, 100).catch(() => undefined);
      await sleep(500);
      return n;
    } finally {
      await probe.disconnect();
    }
  }
});
