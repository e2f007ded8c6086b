/**
 * `npm run chaos` (docs/reliability.md): the platform on the real stack of the environment
 * (a sourced stack.env, like the test tiers) with 2 generation, 2 redirect instances and the analytics
 * consumer, a recorded workload from several client processes, and a seeded schedule of faults
 * (SIGKILL or SIGSTOP of a Redis master, a MariaDB, Kafka, ClickHouse and each app; the network to a
 * MariaDB or ClickHouse slowed or cut; a Redis master cut off from the rest of its cluster; Kafka cut
 * off from one redirect; both cores hogged; a flood of requests). Afterwards the
 * run settles, reads back every link and the click rollups, and the checker gives the verdict table;
 * the exit code is 1 on any violation.
 *
 *   npm run chaos                       the long run: ≥ 10 minutes and ≥ 30 faults
 *   npm run chaos -- --short            one round of every fault, ≤ 2.5 minutes of faults (CI)
 *   npm run chaos -- --seed 1234        replays a schedule (printed at the start of every run)
 *   npm run chaos -- --check <record.json>   the checker again on a recorded run
 */
import { ChildProcess, fork } from 'child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { ClickHouseClient, createClient } from '@clickhouse/client';
import { Kafka, logLevel } from 'kafkajs';
import { ensureClickTopic } from '@shortlink/bus';
import { App, eventually, freePort, metric, metricsOf, REPO_ROOT, serverSecrets, sleep, startApp } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { API_KEY, EDIT_PROPAGATION_BOUND_MS } from '../../../test/e2e/support';
import { check } from './checker';
import { ClientConfig, FromClient, ToClient } from './client';
import { FaultInjector, Instances } from './faults';
import { NetworkFaults } from './network';
import { Partitions } from './partition';
import { ChaosRecord, CpuPressureSample, Fault, Op, RedirectIncarnation, RunConfig, Settled } from './record';
import { describeFault, faultSchedule, LONG, SHORT } from './schedule';
import { verdictTable } from './verdict';

const L1_TTL_MS = 60_000; // REDIRECT_L1_TTL_MS's default, which the run keeps
/** docs/design.md, "Edits reach every instance": 10 s after the master is back, 5 s more when its replica took over while it hung. */
const FAULT_BOUND_MS = 15_000;
const COUNTER_SYNC_MS = 100; // REDIRECT_COUNTER_SYNC_MS's default, which the run keeps

interface Options {
  short: boolean;
  seed: number;
  keep: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { short: false, seed: Math.floor(Math.random() * 2 ** 31), keep: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--short') o.short = true;
    else if (argv[i] === '--keep') o.keep = true;
    else if (argv[i] === '--seed') o.seed = Number(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]} (--short, --seed <n>, --keep)`);
  }
  if (!Number.isInteger(o.seed)) throw new Error('--seed takes an integer');
  return o;
}

/** What a send to a client that has already disconnected gets (EPIPE, a closed channel): nothing to do, it is done. */
const ignoreClosed = () => undefined;

const log = (msg: string) => process.stdout.write(`[chaos ${new Date().toISOString().slice(11, 23)}] ${msg}\n`);

/** The redirect instances' click accounting, scraped every second; a killed instance keeps its last scrape. */
class RedirectScrapes {
  private readonly byPid = new Map<number, RedirectIncarnation & { buffer: number; unflushed: number; scrapedAt: number }>();

  constructor(private readonly apps: Instances) {}

  async scrape(name: string, app: App): Promise<void> {
    const sentAt = Date.now();
    const m = await metricsOf(app.admin);
    const prev = this.byPid.get(app.proc.pid);
    // Once killed, an incarnation keeps its last scrape: its successor answers on the same ports before the App is replaced.
    if (prev?.killedAt !== undefined || !app.proc.alive) return;
    this.byPid.set(app.proc.pid, {
      ...(prev ?? { instance: name, pid: app.proc.pid }),
      dropped: metric(m, 'shortlink_click_events_dropped_total'),
      buffer: metric(m, 'shortlink_click_buffer_size'),
      // What a lost counter could grant again: clicks not yet on the shards, and grants held in leases (docs/design.md, "Max clicks").
      unflushed: metric(m, 'shortlink_redirect_unflushed_clicks') + metric(m, 'shortlink_redirect_reserved_clicks'),
      scrapedAt: sentAt,
    });
  }

  async scrapeAll(): Promise<void> {
    await Promise.all(this.apps.redirect.map((a, i) => this.scrape(FaultInjector.instanceName('redirect', i), a).catch(() => undefined)));
  }

  killing(pid: number): void {
    const inc = this.byPid.get(pid);
    if (inc) inc.killedAt = Date.now();
  }

  /** Clicks granted against maxClicks and not yet flushed, and grants held in leases: the live instances now, the killed ones at their last scrape. */
  async unflushed(): Promise<number> {
    await this.scrapeAll();
    return [...this.byPid.values()].reduce((a, i) => a + i.unflushed, 0);
  }

  /** Each incarnation, a killed one with its last scrape (the checker bounds the clicks it took with it from that). */
  incarnations(): RedirectIncarnation[] {
    return [...this.byPid.values()].map(({ buffer, scrapedAt, unflushed: _, ...inc }) =>
      inc.killedAt === undefined ? inc : { ...inc, lastScrape: { at: scrapedAt, buffer } },
    );
  }

  bufferedNow(): number {
    return [...this.byPid.values()]
      .filter((i) => i.killedAt === undefined && this.apps.redirect.some((a) => a.proc.pid === i.pid))
      .reduce((a, i) => a + i.buffer, 0);
  }
}

/**
 * The machine's CPU pressure every second (Linux PSI, `/proc/pressure/cpu`, `some`), which the checker reads as overload the
 * schedule did not throw (checker.ts, MACHINE_PRESSURE_FLOOR); nothing where the kernel has no PSI.
 */
class CpuPressure {
  readonly samples: CpuPressureSample[] = [];
  private last: { at: number; total: number } | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;

  private static read(): number | null {
    try {
      const some = readFileSync('/proc/pressure/cpu', 'utf8')
        .split('\n')
        .find((l) => l.startsWith('some '));
      const total = /total=(\d+)/.exec(some ?? '');
      return total ? Number(total[1]) : null;
    } catch {
      return null;
    }
  }

  start(): void {
    const take = () => {
      const total = CpuPressure.read();
      const at = Date.now();
      if (total === null) return;
      // `total` counts microseconds of stall.
      if (this.last && at > this.last.at)
        this.samples.push({ from: this.last.at, to: at, some: Math.min(1, (total - this.last.total) / 1000 / (at - this.last.at)) });
      this.last = { at, total };
    };
    take();
    this.timer = setInterval(take, 1000);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** `--check <record.json>`: the checker again on a recorded run, without running anything. */
function checkAgain(file: string): number {
  const record = JSON.parse(readFileSync(file, 'utf8')) as ChaosRecord;
  const verdict = check(record);
  process.stdout.write(`${verdictTable(record.config, verdict, record.settled.at - record.startedAt)}\n`);
  return verdict.passed ? 0 : 1;
}

async function main(): Promise<number> {
  const recorded = process.argv.indexOf('--check');
  if (recorded >= 0) return checkAgain(process.argv[recorded + 1]);
  const o = parseArgs(process.argv.slice(2));
  for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'CLICKHOUSE_URL', 'STACK_SCRIPT', 'STACK_PIDS_DIR'])
    requireEnv(name);
  const schedule = faultSchedule(o.seed, o.short ? SHORT : { ...LONG, faults: 80 });
  const minFaults = o.short ? SHORT.faults : LONG.faults;
  // The short run: one round of every target; a killed Redis master or app takes ~15 s to be back.
  const faultPhaseMs = o.short ? 180_000 : 600_000;
  const config: RunConfig = {
    seed: o.seed,
    mode: o.short ? 'short' : 'long',
    propagationBoundMs: EDIT_PROPAGATION_BOUND_MS,
    l1TtlMs: L1_TTL_MS,
    faultBoundMs: FAULT_BOUND_MS,
    counterSyncMs: COUNTER_SYNC_MS,
  };
  const run = `${Date.now().toString(36)}`;
  const dir = join(tmpdir(), `shortlink-chaos-${run}`);
  mkdirSync(dir, { recursive: true });
  log(`seed ${o.seed} (${config.mode}); replay with: npm run chaos -- ${o.short ? '--short ' : ''}--seed ${o.seed}; record in ${dir}`);
  log(
    `fault schedule (${o.short ? `the first ${minFaults}` : `at least ${minFaults} and 10 minutes`}):\n${schedule
      .slice(0, o.short ? minFaults : 40)
      .map((f, i) => `    ${describeFault(f, i)}`)
      .join('\n')}`,
  );

  const domain = `chaos-${run}.shortlink.test`;
  const topic = `shortlink.clicks.chaos.${run}`;
  const database = `shortlink_chaos_${run}`;
  const conversionsTopic = `shortlink.conversions.chaos.${run}`;
  const env: Record<string, string> = {
    DB_DRIVER: 'mysql',
    CACHE_DRIVER: 'redis',
    BUS_DRIVER: 'kafka',
    OLAP_DRIVER: 'clickhouse',
    LOG_LEVEL: 'warn',
    SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
    ...serverSecrets(),
    SHORTLINK_DEFAULT_DOMAIN: domain,
    SHORTLINK_PUBLIC_BASE_URL: `http://${domain}`,
    KAFKA_CLICK_TOPIC: topic,
    KAFKA_CONSUMER_GROUP: `${topic}.analytics`,
    KAFKA_CONVERSIONS_TOPIC: conversionsTopic,
    CLICKHOUSE_DATABASE: database,
    // A killed consumer's partitions go to its successor once this session has expired.
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    // Every client sends from 127.0.0.1.
    RATE_LIMIT_PER_IP_PER_MINUTE: '0',
  };
  const ch: ClickHouseClient = createClient({
    url: requireEnv('CLICKHOUSE_URL'),
    username: process.env.CLICKHOUSE_USER || 'default',
    password: process.env.CLICKHOUSE_PASSWORD || '',
  });
  const network = new NetworkFaults();
  await network.start(await freePort());
  // Root, iptables and the net_cls cgroups, checked before anything starts (partition.ts).
  const partitions = new Partitions();
  await partitions.prepare();
  // The apps reach MariaDB and ClickHouse through the run's proxies (network.ts); the checker reads them directly.
  const apps: Instances = {
    generation: [],
    redirect: [],
    analytics: [],
    env: await network.route(env, {
      MYSQL_SHARDS: requireEnv('MYSQL_SHARDS'),
      MYSQL_META_URL: requireEnv('MYSQL_META_URL'),
      CLICKHOUSE_URL: requireEnv('CLICKHOUSE_URL'),
      ...(process.env.MYSQL_SPARE_SHARDS ? { MYSQL_SPARE_SHARDS: process.env.MYSQL_SPARE_SHARDS } : {}),
    }),
  };
  const scrapes = new RedirectScrapes(apps);
  const faults = new FaultInjector(apps, network, partitions, {
    beforeKill: async (name, app) => {
      if (app.name !== 'redirect') return;
      await scrapes.scrape(name, app).catch(() => undefined);
      scrapes.killing(app.proc.pid);
    },
    unflushed: () => scrapes.unflushed(),
    flood: (on, until) => {
      for (const c of floodClients) if (c.connected) c.send({ type: 'flood', on, until } satisfies ToClient, ignoreClosed);
    },
    log,
  });
  const clients: ChildProcess[] = [];
  /** The clients that send the floods (main's FLOOD_CLIENTS). */
  const floodClients: ChildProcess[] = [];
  const t0 = Date.now();
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const c of clients) if (c.exitCode === null) c.kill('SIGTERM');
      await faults.restoreAll().catch((e) => log(`restoring the stack: ${(e as Error).message}`));
      await Promise.all([...apps.generation, ...apps.redirect, ...apps.analytics].map((a) => a.stop()));
      await network.stop();
      if (!o.keep) {
        await ch.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => undefined);
        const admin = new Kafka({ brokers: requireEnv('KAFKA_BROKERS').split(','), clientId: 'chaos-cleanup', logLevel: logLevel.NOTHING }).admin();
        await admin
          .connect()
          .then(() => admin.deleteTopics({ topics: [topic, conversionsTopic], timeout: 10_000 }))
          .catch(() => undefined)
          .finally(() => admin.disconnect());
      }
      await ch.close();
    })());
  // Interrupted by hand: servers stopped with SIGSTOP get SIGCONT, killed ones are started again, the apps are stopped.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      log(`${signal}: restoring the stack and stopping the apps`);
      void cleanup().finally(() => process.exit(130));
    });
  // A crash of the run itself (an error nothing handled) restores the stack and stops the apps too, rather than leave
  // servers paused or cut off and the apps running (CI's run once left its four apps and Toxiproxy behind).
  process.once('uncaughtException', (error) => {
    log(`the run crashed (${error.stack ?? error.message}): restoring the stack and stopping the apps`);
    void cleanup().finally(() => process.exit(1));
  });
  try {
    await ensureClickTopic(requireEnv('KAFKA_BROKERS').split(','), topic, 6);
    log('starting 2 generation, 2 redirect instances and the analytics consumer');
    apps.generation.push(await startApp('generation', apps.env, { timeoutMs: 90_000 }));
    const rest = await Promise.all([
      startApp('generation', apps.env, { timeoutMs: 90_000 }),
      startApp('redirect', apps.env, { timeoutMs: 90_000 }),
      startApp('redirect', apps.env, { timeoutMs: 90_000 }),
      startApp('analytics', apps.env, { timeoutMs: 90_000 }),
    ]);
    apps.generation.push(rest[0]);
    apps.redirect.push(rest[1], rest[2]);
    apps.analytics.push(rest[3]);
    log(`apps up in ${Date.now() - t0} ms`);
    // The tenant's backend reports conversions with a key of that scope only (docs/analytics.md, "Conversions").
    const madeKey = await fetch(`${apps.generation[0].base}/api/v1/keys`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `chaos-${run}-backend`, scopes: ['conversions:write'] }),
      signal: AbortSignal.timeout(10_000),
    });
    if (madeKey.status !== 201) throw new Error(`creating the conversions key: ${madeKey.status} ${await madeKey.text()}`);
    const conversionsKey = ((await madeKey.json()) as { apiKey: string }).apiKey;

    // ------------------------------------------------------------------ workload
    const CLIENTS = 3;
    // The flood comes from processes of its own: a client saturated by its own flood would measure the workload's requests late.
    const FLOOD_CLIENTS = 2;
    const named = (kind: 'generation' | 'redirect' | 'analytics') => apps[kind].map((a, i) => ({ name: FaultInjector.instanceName(kind, i), base: a.base }));
    let ready = 0;
    const done: Array<Promise<void>> = [];
    for (let i = 0; i < CLIENTS + FLOOD_CLIENTS; i++) {
      const flooder = i >= CLIENTS;
      const child = fork(join(__dirname, 'client.ts'), [], {
        execArgv: ['-r', join(REPO_ROOT, 'tools', 'register.js')],
        cwd: REPO_ROOT,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      clients.push(child);
      if (flooder) floodClients.push(child);
      // Done when it says so; a client that died first ends the wait too (its record file is then missing: the run fails, it does not hang).
      done.push(
        new Promise((resolve) => {
          child.on('message', (m: FromClient) => m.type === 'done' && resolve());
          child.on('exit', () => resolve());
        }),
      );
      child.on('message', (m: FromClient) => {
        if (m.type === 'ready') ready++;
        if (m.type === 'created')
          // A client that finished may close its channel between the check and the send: the callback takes that error.
          for (const other of clients) if (other !== child && other.connected) other.send({ type: 'codes', codes: m.codes } satisfies ToClient, ignoreClosed);
      });
      const cfg: ClientConfig = {
        client: i,
        seed: o.seed,
        apiKey: API_KEY,
        conversionsKey,
        generation: named('generation'),
        redirect: named('redirect'),
        analytics: named('analytics'),
        tag: run,
        // A flood client sends nothing until a flood window (then FLOOD_LOOPS loops without pause).
        initialLinks: flooder ? 0 : o.short ? 20 : 40,
        rate: o.short ? 30 : 25,
        concurrency: flooder ? 0 : 8,
        out: join(dir, `client-${i}.json`),
      };
      child.send({ type: 'start', config: cfg } satisfies ToClient);
    }
    await eventually('the clients to create their first links', async () => ready === clients.length, 120_000, 200);
    const startedAt = Date.now();
    log(`workload running (${CLIENTS} client processes, ${FLOOD_CLIENTS} more for the floods); faults begin`);
    const scraper = setInterval(() => void scrapes.scrapeAll(), 1000);
    const pressure = new CpuPressure();
    pressure.start();

    // ------------------------------------------------------------------ faults
    const recorded: Fault[] = [];
    for (const [i, plan] of schedule.entries()) {
      const enough = recorded.length >= minFaults && (o.short || Date.now() - startedAt >= faultPhaseMs);
      if (enough || (o.short && Date.now() - startedAt + plan.gapMs + plan.downMs > faultPhaseMs)) break;
      await sleep(plan.gapMs);
      const f = await faults.inject(plan);
      recorded.push(f);
      log(`${describeFault(plan, i)} → ${f.victim}: back after ${f.end - f.start} ms${f.note ? ` (${f.note})` : ''}${f.error ? ` FAILED: ${f.error}` : ''}`);
      // What follows a component that did not come back would be its outage, not the platform's answer to faults.
      if (f.error) break;
    }
    await sleep(5000); // the last recovery, under load
    const endedAt = Date.now();
    clearInterval(scraper);
    pressure.stop();
    log('stopping the workload');
    for (const c of clients) c.send({ type: 'stop' } satisfies ToClient, ignoreClosed);
    await Promise.all(done);
    const ops: Op[] = clients.flatMap((_, i) => JSON.parse(readFileSync(join(dir, `client-${i}.json`), 'utf8')) as Op[]);

    // ------------------------------------------------------------------ settle and read back
    log(`settling: ${ops.length} operations recorded; waiting for the click buffers and the rollups`);
    const countedOf = async (): Promise<Settled['counted']> => {
      const out: Settled['counted'] = {};
      for (const g of ['minute', 'hour', 'day'] as const) {
        const rs = await ch.query({
          // ClickHouse 18.16 has no query parameters; the domain is the run's own name (letters, digits, dots and dashes).
          // Orphan visits (404 LINK_NOT_FOUND, a deleted link's included) have no tenant and are no clicks (docs/analytics.md).
          query: `SELECT code, sumMerge(clicks) AS n FROM ${database}.link_${g} WHERE domain = '${domain}' AND tenant_id != '' GROUP BY code`,
          format: 'JSONEachRow',
        });
        for (const r of (await rs.json()) as Array<{ code: string; n: string | number }>) (out[r.code] ??= { minute: 0, hour: 0, day: 0 })[g] = Number(r.n);
      }
      // The raw visits, one row per click (the ledger's rows carry the topic as their domain, not the run's).
      const visits = await ch.query({
        query: `SELECT code, count() AS n FROM ${database}.visits WHERE domain = '${domain}' AND tenant_id != '' GROUP BY code`,
        format: 'JSONEachRow',
      });
      for (const r of (await visits.json()) as Array<{ code: string; n: string | number }>)
        (out[r.code] ??= { minute: 0, hour: 0, day: 0 }).visits = Number(r.n);
      for (const c of Object.values(out)) c.visits ??= 0;
      return out;
    };
    // Leads, sales and revenue per link from the analytics answer (the funnel), read in the same wait as the clicks (no time added).
    const conversionsOf = async (): Promise<NonNullable<Settled['conversions']>> => {
      const q = new URLSearchParams({
        from: new Date(t0 - 3_600_000).toISOString(),
        to: new Date(Date.now() + 120_000).toISOString(),
        domain,
        limit: '1000',
      });
      const res = await fetch(`${apps.analytics[0].base}/api/v1/stats/conversions?${q}`, {
        headers: { 'x-api-key': API_KEY },
        signal: AbortSignal.timeout(10_000),
      });
      if (res.status !== 200) throw new Error(`the funnel answered ${res.status}: ${await res.text()}`);
      const body = (await res.json()) as { links: Array<{ code: string; leads: number; sales: number; revenue: Record<string, number> }> };
      return Object.fromEntries(body.links.map((l) => [l.code, { leads: l.leads, sales: l.sales, revenue: l.revenue.EUR ?? 0 }]));
    };
    const total = (c: Settled['counted']) => Object.values(c).reduce((a, x) => a + x.minute, 0);
    let conversions: Settled['conversions'];
    let last = '';
    let stableSince = Date.now();
    await eventually(
      'the click and conversion counts to settle',
      async () => {
        await scrapes.scrapeAll();
        conversions = await conversionsOf().catch(() => conversions);
        const n = `${total(await countedOf())} ${JSON.stringify(conversions)}`;
        if (n !== last || scrapes.bufferedNow() > 0) [last, stableSince] = [n, Date.now()];
        return Date.now() - stableSince >= 5000;
      },
      o.short ? 60_000 : 120_000,
      1000,
    ).catch((e) => log(`${(e as Error).message}: checking what is there`));
    const counted = await countedOf();
    await scrapes.scrapeAll();

    const codes = new Set<string>();
    for (const op of ops) {
      if (op.kind === 'create' && op.outcome === 'ok' && op.code) codes.add(op.code);
      for (const r of op.rows ?? []) if (r.status === 201 && r.code) codes.add(r.code);
    }
    const links: Settled['links'] = {};
    const list = [...codes];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = w; i < list.length; i += 8) {
          const code = list[i];
          const api = await fetch(`${apps.generation[i % 2].base}/api/v1/links/${encodeURIComponent(code)}`, {
            headers: { 'x-api-key': API_KEY },
            signal: AbortSignal.timeout(10_000),
          }).catch(() => null);
          const view = api?.status === 200 ? ((await api.json()) as { url: string; status: string }) : (await api?.arrayBuffer(), undefined);
          const r = await fetch(`${apps.redirect[i % 2].base}/${encodeURIComponent(code)}`, { redirect: 'manual', signal: AbortSignal.timeout(10_000) }).catch(
            () => null,
          );
          const problem = r && r.status >= 400 ? ((await r.json().catch(() => ({}))) as { code?: string }).code : (await r?.arrayBuffer(), undefined);
          links[code] = {
            apiStatus: api?.status ?? null,
            apiUrl: view?.url,
            apiState: view?.status,
            redirectStatus: r?.status ?? null,
            location: r?.headers.get('location'),
            problem,
          };
        }
      }),
    );

    const record: ChaosRecord = {
      config,
      startedAt,
      endedAt,
      cpuPressure: pressure.samples,
      ops,
      faults: recorded,
      settled: { at: Date.now(), counted, conversions, incarnations: scrapes.incarnations(), links },
    };
    writeFileSync(join(dir, 'record.json'), JSON.stringify(record));
    const verdict = check(record);
    const table = verdictTable(config, verdict, Date.now() - t0);
    writeFileSync(join(dir, 'verdict.md'), `${table}\n`);
    process.stdout.write(`\n${table}\n\nrecord: ${join(dir, 'record.json')}\n`);
    return verdict.passed ? 0 : 1;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`chaos run failed: ${(e as Error).stack ?? e}\n`);
    process.exit(2);
  },
);
