/**
 * Analytics bench, on demand, on the real stack (`set -a; . <stack.env>; set +a`):
 *   1. Kafka's own ProducerPerformance on a topic of this run: the producer's ceiling;
 *   2. our producer (KafkaClickEventSink, flushes of 2000 clicks) writing N events into a topic of 6
 *      partitions, once, before anything reads it;
 *   3. consumer ingest, `--runs` times: the analytics app (as `npm run start:analytics` runs it) reading
 *      those N events from a fresh group into a fresh ClickHouse database, end to end (decode, guards,
 *      fold per minute, insert, commit), in events/s from its group join to its last event; beside it in
 *      the same run Kafka's ConsumerPerformance reading the same topic (the baseline), and with
 *      `--baseline=<checkout>` the analytics app of another checkout (the code before a change), runs
 *      alternating. CPU seconds of the app, the ClickHouse server and the broker, and how busy the
 *      machine was (all processes), per run;
 *   4. click-to-visible latency: a redirect (Kafka bus, default 200 ms flush) and the stats API,
 *      p50 and p95 over M clicks (`--clicks=0` skips it).
 * `--profile` adds an ingest per variant before the measured runs, with a CPU profile of its window
 * (summarised in the result; profiling slows the app, so that ingest's numbers are not used). Prints markdown and writes bench/results/analytics-<date>.md. 127.0.0.1 only.
 *   node -r ./tools/register.js bench/analytics/run.ts [--events=1000000] [--runs=3] [--baseline=/path/to/checkout] [--profile] [--clicks=40] [--no-ceiling]
 */
import { spawnSync } from 'child_process';
import { randomUUID } from 'crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'fs';
import { join, resolve } from 'path';
import { ensureClickTopic, encodeClickRecord, KafkaClickEventSink } from '@shortlink/bus';
import { ClickEvent } from '@shortlink/clicks-domain';
import { Kafka, logLevel } from 'kafkajs';
import {
  App,
  captureProfile,
  Column,
  cpuSeconds,
  datedResultFile,
  eventually,
  loadAverages,
  machineFacts,
  markdownTable,
  median,
  metric,
  metricsOf,
  Proc,
  PROFILE_HOOK,
  profileHookEnv,
  REPO_ROOT,
  serverSecrets,
  sleep,
  startApp,
  summariseProfile,
} from '@shortlink/harness';

const option = (name: string) => process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
const arg = (name: string, fallback: number) => Number(option(name)?.split('=')[1] ?? fallback);
const EVENTS = arg('events', 1_000_000);
const RUNS = arg('runs', 3);
const CLICKS = arg('clicks', 40);
const BASELINE = option('baseline')?.split('=')[1];
const PROFILE = option('profile') !== undefined;
const CEILING = option('no-ceiling') === undefined;
const BATCH = 2000;
const PARTITIONS = 6;
const API_KEY = `sl_bench_${randomUUID().replace(/-/g, '')}`;
const BROWSER_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
/** As `npm run start:analytics` and the image start the app. */
const NODE_ARGS = ['--max-semi-space-size=64'];
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
const n0 = (x: number) => Math.round(x).toLocaleString('en-US');

/** Busy and total CPU seconds of the whole machine so far (all cores, all processes), from /proc/stat. */
function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0) / 100;
  const idle = (fields[3] + fields[4]) / 100;
  return { busy: total - idle, total };
}

/** Peak resident set of a process, MiB (VmHWM of /proc/<pid>/status). */
function peakRss(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb ? Number(kb) / 1024 : NaN;
}

interface Variant {
  readonly name: string;
  /** The checkout whose analytics app runs. */
  readonly dir: string;
}

interface Ingest {
  readonly variant: string;
  readonly run: number;
  readonly eventsPerSecond: number;
  readonly seconds: number;
  readonly mbPerSecond: number;
  /** CPU seconds per million events: the app, the ClickHouse server, the broker. */
  readonly cpuApp: number;
  readonly cpuClickHouse: number;
  readonly cpuKafka: number;
  /** Share of the machine's CPU busy during the ingest (all processes), and the share of that not ours. */
  readonly machineBusy: number;
  readonly othersBusy: number;
  /** The app's peak resident memory (VmHWM). */
  readonly peakRssMiB: number;
  readonly profile: string | null;
}

interface KafkaRead {
  readonly run: number;
  readonly recordsPerSecond: number;
  readonly mbPerSecond: number;
}

async function main() {
  const brokers = need('KAFKA_BROKERS');
  const clickhouseUrl = need('CLICKHOUSE_URL');
  const clickhousePid = Number(process.env.STACK_CLICKHOUSE_PID ?? NaN);
  const kafkaPid = Number(process.env.STACK_KAFKA_PID ?? NaN);
  const start = new Date();
  const startLoad = loadAverages();
  const runId = Date.now().toString(36);
  const topic = `shortlink.clicks.bench.${runId}`;
  const perfTopic = `${topic}.perf`;
  const rows: Array<[string, string, string]> = [];
  await ensureClickTopic(brokers.split(','), topic, PARTITIONS);
  const admin = new Kafka({ clientId: 'bench-analytics-admin', brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();

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
  const bytesPerEvent = encodeClickRecord(events(BATCH, 'sample')).length / BATCH;

  // 1. Kafka's producer ceiling: records of the size ours have on average, acks=all.
  if (CEILING) {
    await ensureClickTopic(brokers.split(','), perfTopic, PARTITIONS);
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
    const prodRate = Number(/([\d.]+) records\/sec/.exec(prodPerf.trim().split('\n').pop() ?? '')?.[1] ?? NaN);
    rows.push([
      `Kafka ProducerPerformance (${Math.round(bytesPerEvent)}-byte records, acks=all)`,
      `${n0(prodRate)} records/s`,
      'producer ceiling: one Kafka record per event',
    ]);
  }

  // 2. Our producer: one record per partition per flush of 2000 clicks, gzip, acks=all, idempotent.
  const tenantId = `bench-${runId}`;
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
  const records = Math.ceil(EVENTS / BATCH) * PARTITIONS;
  /** partition -> log end offset, once everything is produced. */
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
  const eventsPerRecord = EVENTS / records;
  rows.push([
    `our producer (KafkaClickEventSink, flushes of ${BATCH})`,
    `${n0(EVENTS / produceSeconds)} events/s`,
    `${bytesPerEvent.toFixed(1)} bytes/event before gzip; ${records} records of ~${Math.round(eventsPerRecord)} events`,
  ]);

  const env = {
    DB_DRIVER: 'mysql',
    CACHE_DRIVER: 'redis',
    BUS_DRIVER: 'kafka',
    OLAP_DRIVER: 'clickhouse',
    LOG_LEVEL: 'warn',
    SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
    ...serverSecrets(),
    KAFKA_CLICK_TOPIC: topic,
    RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    RATE_LIMIT_GLOBAL_PER_SECOND: '0',
    // Every process agrees on the links' domain whatever its port (the default is localhost:<REDIRECT_PORT>).
    SHORTLINK_PUBLIC_BASE_URL: 'http://bench.shortlink.test',
  };
  const databases: string[] = [];

  // 3. Ingest: each variant from a fresh group into a fresh database, all N events waiting.
  const ingest = async (variant: Variant, run: number): Promise<Ingest> => {
    const database = `shortlink_bench_${runId}_${variant.name}_${run}`;
    databases.push(database);
    const profileFile = join(REPO_ROOT, 'bench/results', `analytics-${runId}-${variant.name}.cpuprofile.tmp`);
    const profiled = run === 0;
    const groupId = `${topic}.${variant.name}.${run}`;
    type Snapshot = { at: number; app: number; clickhouse: number; kafka: number; machine: { busy: number; total: number } };
    let proc: Proc | undefined;
    const snapshot = (): Snapshot => ({
      at: Date.now(),
      app: proc ? (cpuSeconds(proc.pid) ?? NaN) : NaN,
      clickhouse: cpuSeconds(clickhousePid) ?? NaN,
      kafka: cpuSeconds(kafkaPid) ?? NaN,
      machine: machineCpu(),
    });
    // The window opens when the app's consumer has joined its group (the broker says so): from then
    // on it fetches. Its boot before that, and the join itself, are left out, as ConsumerPerformance's
    // fetch rate leaves its own out.
    let stopWatching = false;
    const joined = (async (): Promise<Snapshot> => {
      while (!stopWatching) {
        const group = (await admin.describeGroups([groupId]).catch(() => ({ groups: [] }))).groups[0];
        if (group?.state === 'Stable' && group.members.length > 0) return snapshot();
        await sleep(25);
      }
      return snapshot();
    })();
    const app = await startApp(
      'analytics',
      {
        ...env,
        KAFKA_CONSUMER_GROUP: groupId,
        CLICKHOUSE_DATABASE: database,
        ...(profiled ? profileHookEnv(profileFile) : {}),
      },
      { checkout: variant.dir, nodeArgs: NODE_ARGS, started: (p) => (proc = p), timeoutMs: 120_000, ...(profiled ? { preload: [PROFILE_HOOK] } : {}) },
    ).catch((error: unknown) => {
      stopWatching = true;
      throw error;
    });
    try {
      const measure = async () => {
        const before = await joined;
        // Done when the group's committed offsets reach the end of every partition (the consumer commits
        // a batch's offset only after its store commit), asked of the broker: nothing polls the app meanwhile.
        await eventually(
          'all events aggregated',
          async () => {
            const committed = (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]?.partitions ?? [];
            return committed.length === ends.size && committed.every((p) => BigInt(p.offset) >= ends.get(p.partition)!);
          },
          900_000,
          50,
        );
        const after = snapshot();
        const aggregated = metric(await metricsOf(app.admin), 'shortlink_analytics_events_total');
        if (aggregated !== EVENTS) throw new Error(`${variant.name} run ${run}: ${aggregated} events aggregated, ${EVENTS} produced`);
        const peakRssMiB = peakRss(app.proc.pid);
        const seconds = (after.at - before.at) / 1000;
        const perMillion = (a: number, b: number) => ((b - a) / EVENTS) * 1e6;
        const busy = after.machine.busy - before.machine.busy;
        const ours = after.app - before.app + (after.clickhouse - before.clickhouse) + (after.kafka - before.kafka);
        return {
          variant: variant.name,
          run,
          eventsPerSecond: EVENTS / seconds,
          seconds,
          mbPerSecond: bytes / 1_048_576 / seconds,
          cpuApp: perMillion(before.app, after.app),
          cpuClickHouse: perMillion(before.clickhouse, after.clickhouse),
          cpuKafka: perMillion(before.kafka, after.kafka),
          machineBusy: busy / (after.machine.total - before.machine.total),
          othersBusy: Math.max(0, busy - ours) / (after.machine.total - before.machine.total),
          peakRssMiB,
          profile: null,
        };
      };
      if (!profiled) return await measure();
      const { result, profile } = await captureProfile(app.proc, profileFile, measure);
      return { ...result, profile: profile ? summariseProfile(profile) : '(no profile written)' };
    } finally {
      stopWatching = true;
      await app.stop();
      // A handler that failed (and had its batch redelivered) is worth knowing beside its numbers.
      const out = app.proc.output();
      const failures = out.split('redelivering the batch').length - 1;
      if (failures > 0)
        console.error(
          `${variant.name} run ${run}: ${failures} redeliveries, e.g. ${out.slice(out.indexOf('redelivering the batch'), out.indexOf('redelivering the batch') + 800)}`,
        );
    }
  };

  const kafkaRead = (run: number): KafkaRead => {
    const out = kafkaTool('org.apache.kafka.tools.ConsumerPerformance', [
      '--bootstrap-server',
      brokers,
      '--topic',
      topic,
      '--messages',
      String(records),
      '--group',
      `${topic}.perf.${run}`,
      '--timeout',
      '60000',
    ]);
    // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
    const cols = out
      .trim()
      .split('\n')
      .pop()!
      .split(',')
      .map((c) => Number(c.trim()));
    // Fetch rates: from its first fetch to its last, as ours is from the first batch to the last (the group join left out on both sides).
    return { run, recordsPerSecond: cols[9], mbPerSecond: cols[8] };
  };

  const variants: Variant[] = [...(BASELINE ? [{ name: 'before', dir: resolve(BASELINE) }] : []), { name: BASELINE ? 'after' : 'current', dir: REPO_ROOT }];
  const ingests: Ingest[] = [];
  const profiles: Ingest[] = [];
  const reads: KafkaRead[] = [];
  if (PROFILE) for (const variant of variants) profiles.push(await ingest(variant, 0));
  for (let run = 1; run <= RUNS; run++) {
    // Alternating order, so that neither variant always runs on a cooler (or hotter) machine.
    const order = run % 2 === 1 ? variants : [...variants].reverse();
    for (const variant of order) {
      const r = await ingest(variant, run);
      ingests.push(r);
      console.error(
        `run ${run} ${variant.name}: ${n0(r.eventsPerSecond)} events/s in ${r.seconds.toFixed(1)} s; CPU s per 1M events app ${r.cpuApp.toFixed(1)}, ClickHouse ${r.cpuClickHouse.toFixed(1)}, Kafka ${r.cpuKafka.toFixed(1)}; machine busy ${(r.machineBusy * 100).toFixed(0)} %, others ${(r.othersBusy * 100).toFixed(0)} %; peak RSS ${r.peakRssMiB.toFixed(0)} MiB`,
      );
    }
    const k = kafkaRead(run);
    reads.push(k);
    console.error(`run ${run} Kafka ConsumerPerformance: ${n0(k.recordsPerSecond)} records/s, ${k.mbPerSecond.toFixed(2)} MB/s`);
  }

  const kafkaEvents = (k: KafkaRead) => k.recordsPerSecond * eventsPerRecord;
  const costs: Column[] = [
    ['× Kafka by events', 'r'],
    ['× Kafka by bytes', 'r'],
    ['CPU s / 1M events: app', 'r'],
    ['ClickHouse', 'r'],
    ['Kafka broker', 'r'],
    ['machine busy (others)', 'r'],
  ];
  const ingestTable = markdownTable(
    [['run', 'r'], ['consumer', 'l'], ['events/s', 'r'], ['MB/s of records', 'r'], ...costs, ['app peak RSS MiB', 'r']],
    [
      ...ingests.map((r) => {
        const k = reads.find((x) => x.run === r.run)!;
        return [
          r.run,
          r.variant,
          n0(r.eventsPerSecond),
          r.mbPerSecond.toFixed(2),
          (r.eventsPerSecond / kafkaEvents(k)).toFixed(3),
          (r.mbPerSecond / k.mbPerSecond).toFixed(3),
          r.cpuApp.toFixed(1),
          r.cpuClickHouse.toFixed(1),
          r.cpuKafka.toFixed(1),
          `${(r.machineBusy * 100).toFixed(0)} % (${(r.othersBusy * 100).toFixed(0)} %)`,
          r.peakRssMiB.toFixed(0),
        ];
      }),
      ...reads.map((k) => [k.run, 'Kafka ConsumerPerformance', n0(kafkaEvents(k)), k.mbPerSecond.toFixed(2), '1', '1', '', '', '', '', '']),
    ],
  );
  const medians = variants.map((v) => {
    const mine = ingests.filter((r) => r.variant === v.name);
    const ratio = (f: (r: Ingest, k: KafkaRead) => number) =>
      median(
        mine.map((r) =>
          f(
            r,
            reads.find((x) => x.run === r.run)!,
          ),
        ),
      );
    return [
      v.name,
      n0(median(mine.map((r) => r.eventsPerSecond))),
      ratio((r, k) => r.eventsPerSecond / kafkaEvents(k)).toFixed(3),
      ratio((r, k) => r.mbPerSecond / k.mbPerSecond).toFixed(3),
      median(mine.map((r) => r.cpuApp)).toFixed(1),
      median(mine.map((r) => r.cpuClickHouse)).toFixed(1),
      median(mine.map((r) => r.cpuKafka)).toFixed(1),
      `${(median(mine.map((r) => r.machineBusy)) * 100).toFixed(0)} % (${(median(mine.map((r) => r.othersBusy)) * 100).toFixed(0)} %)`,
    ];
  });
  const medianTable = markdownTable(
    [['consumer', 'l'], ['events/s (median)', 'r'], ...costs],
    [...medians, ['Kafka ConsumerPerformance', n0(median(reads.map(kafkaEvents))), '1', '1', '', '', '', '']],
  );

  // 4. Click-to-visible: redirect (Kafka bus) -> consumer -> ClickHouse -> stats API.
  const apps: App[] = [];
  if (CLICKS > 0) {
    const database = `shortlink_bench_${runId}_fresh`;
    databases.push(database);
    const freshEnv = { ...env, KAFKA_CLICK_TOPIC: `${topic}.fresh`, KAFKA_CONSUMER_GROUP: `${topic}.fresh.analytics`, CLICKHOUSE_DATABASE: database };
    try {
      const analytics = await startApp('analytics', freshEnv, { nodeArgs: NODE_ARGS });
      apps.push(analytics);
      const generation = await startApp('generation', freshEnv);
      apps.push(generation);
      const redirect = await startApp('redirect', freshEnv, { nodeArgs: NODE_ARGS });
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
  }

  await admin.disconnect();
  for (const database of databases) {
    await fetch(clickhouseUrl, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` }).catch(() => undefined);
  }

  const table = ['| measure | result | note |', '|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  const profileText = profiles
    .map(
      (r) =>
        `### CPU profile of the analytics app, ${r.variant} (an ingest of its own before the runs: ${n0(r.eventsPerSecond)} events/s while profiled; the window from its first batch to its last)\n\n${r.profile}`,
    )
    .join('\n\n');
  const text = [
    `# Analytics bench ${start.toISOString()}`,
    '',
    ...machineFacts({
      start,
      startLoad,
      tools: [
        `stack: ClickHouse at ${clickhouseUrl}, Kafka at ${brokers}`,
        ...(BASELINE ? [`baseline ("before"): the analytics app of ${resolve(BASELINE)}`] : []),
      ],
    }),
    '',
    `Events: ${n0(EVENTS)}, flushes of ${BATCH}, topic of ${PARTITIONS} partitions; ${RUNS} ingest runs per consumer, alternating; command: \`node -r ./tools/register.js bench/analytics/run.ts ${process.argv.slice(2).join(' ')}\``,
    '',
    table,
    '',
    '## Ingest, medians',
    '',
    medianTable,
    '',
    '## Ingest, every run',
    '',
    'Rates from the moment the consumer has joined its group (the broker\'s group state) to its last event counted, Kafka\'s as its fetch rate (its join left out too); "× Kafka" per run against the ConsumerPerformance read of that run. CPU per million events from /proc (the ClickHouse server includes its background merges during the window). "machine busy": all cores, all processes; "others": what neither the app, ClickHouse nor the broker used (other work on the machine).',
    '',
    ingestTable,
    '',
    profileText,
  ].join('\n');
  console.log(text);
  const dir = join(REPO_ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(datedResultFile(dir, 'analytics', start), text + '\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
