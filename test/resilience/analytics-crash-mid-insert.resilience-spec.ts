import { randomInt } from 'crypto';
import { existsSync } from 'fs';
import { DIMENSION_ID } from '@shortlink/clicks-domain';
import { eventually, metric, metricsOf, sleep } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { AnalyticsRig, producerOf } from './analytics-rig';
import { Outages, stack, stackPid } from './support';

/**
 * Exactly once (docs/analytics.md, "Exactly once"), on the real stack (Kafka, ClickHouse 18.16):
 * - ClickHouse is killed with SIGKILL while the consumer's inserts are running, several times: a write
 *   is two inserts at once (the rollups, which fan out to six tables through materialized views, and
 *   the raw visits), each table committing on its own, so a kill can leave some tables written and
 *   others not. After the replays, every table (the rollups
 *   at each granularity, a dimension table and the raw visits) holds each click produced exactly once.
 * - The analytics consumer is killed with SIGKILL mid-flight: the raw visits and the rollups agree,
 *   per link, with what was produced.
 * The truth is read straight from ClickHouse. Every wait is bounded; ClickHouse is started again in a
 * finally (and in afterAll as a net).
 */
describe('analytics counts exactly once through crashes mid-insert, raw visits included', () => {
  const RUN = Date.now().toString(36);
  const outages = new Outages();
  const measured: Record<string, unknown> = {};
  let rig: AnalyticsRig;

  /** The tables the consumer's two inserts reach: the rollups through the views of rollup_input, the raw visits straight. */
  const DATA_TABLES = ['dim_day', 'dim_hour', 'dim_minute', 'link_day', 'link_hour', 'link_minute', 'visits'];

  /** Clicks of the tenant per table: the three link rollups, the countries of the minute dimension table, the raw visits. */
  const counted = async (tenantId: string): Promise<Record<string, number>> => {
    const where = `tenant_id = '${tenantId}'`;
    const one = async (sql: string) => Number((await rig.query<{ n: string | number }>(sql))[0]?.n ?? 0);
    return {
      link_minute: await one(`SELECT sumMerge(clicks) AS n FROM ${rig.database}.link_minute WHERE ${where}`),
      link_hour: await one(`SELECT sumMerge(clicks) AS n FROM ${rig.database}.link_hour WHERE ${where}`),
      link_day: await one(`SELECT sumMerge(clicks) AS n FROM ${rig.database}.link_day WHERE ${where}`),
      dim_minute: await one(`SELECT sumMerge(clicks) AS n FROM ${rig.database}.dim_minute WHERE ${where} AND dim = ${DIMENSION_ID.countries}`),
      visits: await one(`SELECT count() AS n FROM ${rig.database}.visits WHERE ${where}`),
    };
  };
  const everywhere = (n: number) => ({ link_minute: n, link_hour: n, link_day: n, dim_minute: n, visits: n });
  const countedExactly = async (tenantId: string, expected: number, timeoutMs: number) => {
    let last: Record<string, number> = {};
    await eventually(
      `${expected} clicks of ${tenantId} in every table`,
      async () => {
        last = await counted(tenantId);
        return Object.values(last).every((n) => n >= expected);
      },
      timeoutMs,
      500,
    ).catch(() => undefined);
    // Settled: nothing arrives late, and nothing twice.
    await sleep(2000);
    expect(await counted(tenantId)).toEqual(everywhere(expected));
  };

  const clickhousePid = () => stackPid('clickhouse', (cmdline) => cmdline.includes('clickhouse'));

  beforeAll(async () => {
    for (const name of ['KAFKA_BROKERS', 'CLICKHOUSE_URL', 'STACK_SCRIPT', 'STACK_PIDS_DIR', 'MYSQL_META_URL']) requireEnv(name);
    await stack('status');
    rig = new AnalyticsRig('mid-insert');
    await rig.open();
  });

  afterAll(async () => {
    await rig?.stopApps();
    await outages.restoreAll();
    await rig?.close();
    console.log(`analytics crash mid-insert measurements: ${JSON.stringify({ ...measured, ...outages.timings })}`);
  });

  it('holds each click exactly once in every table although ClickHouse was SIGKILLed 3 times in the middle of an insert', async () => {
    const tenantId = `t-chkill-${RUN}`;
    const next = producerOf(tenantId, 'mid-insert.test');
    // A backlog first, then a steady flow while ClickHouse is killed, so the consumer inserts back to back.
    let produced = 0;
    for (; produced < 12_000; produced += 2_000) await rig.sink.send(next(2_000));
    let killing = true;
    const producing = (async () => {
      while (killing && produced < 200_000) {
        await rig.sink.send(next(1_000));
        produced += 1_000;
        await sleep(200);
      }
    })();
    const consumer = await rig.startAnalytics();
    const kills: Array<{ tablesWritten: string[]; countedAfter: Record<string, number> }> = [];
    try {
      for (let k = 0; k < 3; k++) {
        // Kill while an insert of the consumer (system.processes lists it) has committed a part into
        // some of the tables its views write, and not yet into the others: the tables are apart.
        let baseline: Map<string, number> | undefined;
        const tablesWritten = await eventually(
          'an insert of the consumer halfway through its tables',
          async () => {
            const [r] = await rig
              .query<{ inserts: string | number; parts: string[] }>(
                `SELECT (SELECT count() FROM system.processes WHERE query LIKE 'INSERT INTO ${rig.database}.rollup_input%' OR query LIKE 'INSERT INTO ${rig.database}.visits%') AS inserts,` +
                  ` (SELECT groupArray(table) FROM system.parts WHERE database = '${rig.database}' AND level = 0` +
                  ` AND table IN (${DATA_TABLES.map((t) => `'${t}'`).join(', ')})) AS parts`,
              )
              .catch(() => []);
            if (!r || Number(r.inserts) === 0) {
              baseline = undefined;
              return undefined;
            }
            const parts = new Map<string, number>();
            for (const t of r.parts) parts.set(t, (parts.get(t) ?? 0) + 1);
            if (!baseline) {
              baseline = parts;
              return undefined;
            }
            const grown = DATA_TABLES.filter((t) => (parts.get(t) ?? 0) > (baseline!.get(t) ?? 0));
            if (grown.length === DATA_TABLES.length) {
              baseline = parts; // this one is past its tables: wait for the next
              return undefined;
            }
            return grown.length > 0 ? grown : undefined;
          },
          120_000,
          2,
        );
        const pid = clickhousePid();
        outages.killed('clickhouse');
        process.kill(pid, 'SIGKILL');
        await eventually('clickhouse gone', async () => !existsSync(`/proc/${pid}`), 30_000, 50);
        try {
          await sleep(randomInt(200, 1500));
        } finally {
          await outages.start('clickhouse');
        }
        kills.push({ tablesWritten, countedAfter: await counted(tenantId) });
      }
    } finally {
      killing = false;
      await producing;
    }
    measured.clickhouseKills = kills;
    await countedExactly(tenantId, produced, 300_000);
    expect(consumer.proc.alive).toBe(true);
  }, 900_000);

  it('keeps the raw visits and the rollups in agreement, per link, after the consumer is SIGKILLed 3 times', async () => {
    const tenantId = `t-consumer-kill-${RUN}`;
    const next = producerOf(tenantId, 'mid-insert.test');
    const TOTAL = 30_000;
    let consumer = rig.apps[rig.apps.length - 1] ?? (await rig.startAnalytics());
    let produced = 0;
    // Clicks keep coming until the last kill: a consumer started after everything was counted would wait for nothing.
    let killsDone = false;
    const producing = (async () => {
      while (produced < TOTAL || !killsDone) {
        await rig.sink.send(next(2_000));
        produced += 2_000;
        await sleep(300);
      }
    })();
    for (let k = 0; k < 3; k++) {
      await eventually('the consumer aggregating', async () => metric(await metricsOf(consumer.admin), 'shortlink_analytics_events_total') > 0, 60_000, 100);
      await sleep(randomInt(200, 1500));
      process.kill(consumer.proc.pid, 'SIGKILL');
      await consumer.proc.exited;
      rig.apps.splice(rig.apps.indexOf(consumer), 1);
      consumer = await rig.startAnalytics();
    }
    killsDone = true;
    await producing;
    await countedExactly(tenantId, produced, 300_000);
    const perLink = async (sql: string) => new Map((await rig.query<{ code: string; n: string | number }>(sql)).map((r) => [r.code, Number(r.n)]));
    const visits = await perLink(`SELECT code, count() AS n FROM ${rig.database}.visits WHERE tenant_id = '${tenantId}' GROUP BY code`);
    const rollup = await perLink(`SELECT code, sumMerge(clicks) AS n FROM ${rig.database}.link_day WHERE tenant_id = '${tenantId}' GROUP BY code`);
    expect(visits.size).toBe(40);
    expect(visits).toEqual(rollup);
    expect([...visits.values()].every((n) => n === produced / 40)).toBe(true);
  }, 900_000);
});
