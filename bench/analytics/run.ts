/**
 * Analytics bench, on demand, on the real stack (`set -a; . <stack.env>; set +a`):
 *   1. Kafka's own ProducerPerformance on a topic of this run: the producer's ceiling;
 *   2. our producer (KafkaClickEventSink, flushes of 2000 clicks) writing N events;
 *   3. consumer ingest: the analytics app reading those N events from a fresh group, in events/s,
 *      beside Kafka's ConsumerPerformance reading the same topic in the same run (the baseline);
 *   4. click-to-visible latency: a redirect (Kafka bus, default 200 ms flush) and the stats API,
 *      p50 and p95 over M clicks.
 * Prints a markdown table and writes bench/results/analytics-<date>.md. 127.0.0.1 only.
 *   node -r ./tools/register.js bench/analytics/run.ts [--events=200000] [--clicks=40]
 */
import { spawnSync } from 'child_process';
import { randomUUID } from 'crypto';
import { mkdirSync, writeFileSync } from 'fs';
import { cpus, loadavg } from 'os';
import { join } from 'path';
import { ensureClickTopic, encodeClickRecord, KafkaClickEventSink } from '@shortlink/bus';
import { ClickEvent } from '@shortlink/clicks-domain';
import { App, eventually, metric, metricsOf, REPO_ROOT, serverSecrets, sleep, startApp } from '@shortlink/harness';

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const EVENTS = arg('events', 200_000);
const CLICKS = arg('clicks', 40);
const BATCH = 2000;
const API_KEY = `sl_bench_${randomUUID().replace(/-/g, '')}`;
const BROWSER_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const need = (name: string) =>
  process.env[name] ??
  (() => {
    throw new Error(`${name} is not set: source the stack's stack.env`);
  })();

function kafkaTool(cls: string, args: string[]): string {
  const r = spawnSync('bash', [join(REPO_ROOT, 'deploy/local/stack.sh'), 'kafka-tool', cls, ...args], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${cls} failed: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function main() {
  const brokers = need('KAFKA_BROKERS');
  const run = Date.now().toString(36);
  const topic = `shortlink.clicks.bench.${run}`;
  const perfTopic = `${topic}.perf`;
  const database = `shortlink_bench_${run}`;
  const rows: Array<[string, string, string]> = [];
  await ensureClickTopic(brokers.split(','), topic, 6);
  await ensureClickTopic(brokers.split(','), perfTopic, 6);

  // 1. Kafka's producer ceiling: records of the size ours have on average (measured below), acks=all.
  let seq = 0;
  const producer = randomUUID().slice(0, 16);
  const events = (n: number, tenantId: string): ClickEvent[] =>
    Array.from({ length: n }, () => {
      const i = seq++;
      return {
        producer,
        seq: i,
        kind: 'click',
        occurredAt: Date.now(),
        tenantId,
        linkId: String(i % 1000),
        domain: 'bench.example',
        code: `c${i % 1000}`,
        visitor: (i * 7919) % 1_000_003,
        country: 'DE',
        region: null,
        city: null,
        source: 'link',
        refererHost: i % 2 ? 'news.example' : null,
        userAgent: BROWSER_UA,
        variant: null,
      };
    });
  const sample = events(BATCH, 'sample');
  const bytesPerEvent = encodeClickRecord(sample).length / BATCH;

  const prodPerf = kafkaTool('org.apache.kafka.tools.ProducerPerformance', [
    '--topic',
    perfTopic,
    '--num-records',
    String(EVENTS),
    '--record-size',
    String(Math.max(1, Math.round(bytesPerEvent))),
    '--throughput',
    '-1',
    '--producer-props',
    `bootstrap.servers=${brokers}`,
    'acks=all',
    'linger.ms=5',
    'batch.size=262144',
  ]);
  const prodLine = prodPerf.trim().split('\n').pop() ?? '';
  const prodRate = Number(/([\d.]+) records\/sec/.exec(prodLine)?.[1] ?? NaN);
  rows.push([
    `Kafka ProducerPerformance (${Math.round(bytesPerEvent)}-byte records, acks=all)`,
    `${Math.round(prodRate).toLocaleString('en-US')} records/s`,
    'producer ceiling: one Kafka record per event',
  ]);

  // 2. Our producer: one record per partition per flush of 2000 clicks, gzip, acks=all, idempotent.
  const tenantId = `bench-${run}`;
  const sink = new KafkaClickEventSink({ brokers, topic, clientId: 'bench-analytics', logLevel: 'nothing' });
  const t0 = Date.now();
  let bytes = 0;
  for (let sent = 0; sent < EVENTS; sent += BATCH) {
    const batch = events(Math.min(BATCH, EVENTS - sent), tenantId);
    bytes += encodeClickRecord(batch).length;
    await sink.send(batch);
  }
  const produceSeconds = (Date.now() - t0) / 1000;
  await sink.close();
  rows.push([
    `our producer (KafkaClickEventSink, flushes of ${BATCH})`,
    `${Math.round(EVENTS / produceSeconds).toLocaleString('en-US')} events/s`,
    `${bytesPerEvent.toFixed(1)} bytes/event before gzip; ${(EVENTS / produceSeconds / prodRate).toFixed(1)}× Kafka's per-record ceiling`,
  ]);

  // 3. Consumer ingest: the analytics app, a fresh group, all N events waiting.
  const env = {
    DB_DRIVER: 'mysql',
    CACHE_DRIVER: 'redis',
    BUS_DRIVER: 'kafka',
    OLAP_DRIVER: 'clickhouse',
    LOG_LEVEL: 'warn',
    SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
    ...serverSecrets(),
    KAFKA_CLICK_TOPIC: topic,
    KAFKA_CONSUMER_GROUP: `${topic}.analytics`,
    CLICKHOUSE_DATABASE: database,
    RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    RATE_LIMIT_GLOBAL_PER_SECOND: '0',
    // Every process agrees on the links' domain whatever its port (the default is localhost:<REDIRECT_PORT>).
    SHORTLINK_PUBLIC_BASE_URL: 'http://bench.shortlink.test',
  };
  const apps: App[] = [];
  try {
    const analytics = await startApp('analytics', env);
    apps.push(analytics);
    let first = 0;
    let firstCount = 0;
    await eventually(
      'the first events',
      async () => {
        firstCount = metric(await metricsOf(analytics.admin), 'shortlink_analytics_events_total');
        first = Date.now();
        return firstCount > 0;
      },
      60_000,
      20,
    );
    await eventually('all events aggregated', async () => metric(await metricsOf(analytics.admin), 'shortlink_analytics_events_total') >= EVENTS, 300_000, 50);
    const ingestSeconds = (Date.now() - first) / 1000;
    const ingestRate = (EVENTS - firstCount) / ingestSeconds;
    const records = Math.ceil(EVENTS / BATCH) * 6;
    const consPerf = kafkaTool('org.apache.kafka.tools.ConsumerPerformance', [
      '--bootstrap-server',
      brokers,
      '--topic',
      topic,
      '--messages',
      String(records),
      '--group',
      `${topic}.perf`,
      '--timeout',
      '60000',
    ]);
    // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, ...
    const cols = consPerf
      .trim()
      .split('\n')
      .pop()!
      .split(',')
      .map((c) => c.trim());
    const kafkaMBs = Number(cols[3]);
    const kafkaRecs = Number(cols[5]);
    const ourMBs = bytes / 1_048_576 / ingestSeconds;
    rows.push([
      'analytics consumer ingest (decode, dedup, classify, aggregate, insert into ClickHouse 18.16)',
      `${Math.round(ingestRate).toLocaleString('en-US')} events/s`,
      `${ourMBs.toFixed(2)} MB/s of records`,
    ]);
    rows.push([
      'Kafka ConsumerPerformance on the same topic (baseline)',
      `${Math.round(kafkaRecs).toLocaleString('en-US')} records/s`,
      `${kafkaMBs.toFixed(2)} MB/s; ours/Kafka's by bytes: ${(ourMBs / kafkaMBs).toFixed(3)}× (records of up to ~${Math.round(BATCH / 6)} events; ${records} records in all)`,
    ]);

    // 4. Click-to-visible: redirect (Kafka bus) -> consumer -> ClickHouse -> stats API.
    const generation = await startApp('generation', env);
    apps.push(generation);
    const redirect = await startApp('redirect', env);
    apps.push(redirect);
    const created = (await (
      await fetch(`${generation.base}/api/v1/links`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify({ url: 'https://example.com/fresh' }),
      })
    ).json()) as { code: string };
    const latencies: number[] = [];
    for (let i = 1; i <= CLICKS; i++) {
      const clickedAt = Date.now();
      await fetch(`${redirect.base}/${created.code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA } });
      await eventually(
        'the click in stats',
        async () => {
          const s = (await (await fetch(`${analytics.base}/api/v1/links/${created.code}/stats`, { headers: { 'x-api-key': API_KEY } })).json()) as {
            totals: { clicks: number };
          };
          return s.totals.clicks >= i;
        },
        30_000,
        25,
      );
      latencies.push(Date.now() - clickedAt);
      await sleep(100 + Math.random() * 300);
    }
    rows.push([
      `click-to-visible in its minute's stats (${CLICKS} clicks, polled every 25 ms)`,
      `p50 ${quantile(latencies, 0.5)} ms, p95 ${quantile(latencies, 0.95)} ms`,
      `max ${Math.max(...latencies)} ms; target p95 < 5000 ms`,
    ]);
  } finally {
    for (const app of apps.reverse()) await app.stop();
  }

  const date = new Date().toISOString();
  const table = ['| measure | result | note |', '|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, node ${process.version}, ${date}`;
  const text = `# Analytics bench ${date}\n\n${machine}\n\nEvents: ${EVENTS}, flushes of ${BATCH}, topic of 6 partitions.\n\n${table}\n`;
  console.log(text);
  const dir = join(REPO_ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `analytics-${date.slice(0, 16).replace(/[:T]/g, '-')}.md`), text);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
