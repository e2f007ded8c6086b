/**
 * The cases (README.md, "Cases"): the bare server kept up for the whole invocation, the Fastify
 * reference, the embedded L1 case, the real-stack cases (one redirect process per configuration,
 * measured again once when the shared stack was restarted during it) and the Redis floor.
 */
import { mkdtempSync } from 'fs';
import { join } from 'path';
import { App, captureProfile, CreatedLink, firstLine, summariseProfile } from '@shortlink/harness';
import { StackComponent, StackState, stackState, waitStackUp } from '../shared/stack';
import { BEFORE_AFTER_CASES, CaseId, STACK_CASES, wants } from './cli';
import { BenchContext, PROFILES_DIR, skip } from './context';
import { ensureBenchTopic } from './kafka';
import { safetyCases } from './safety';
import { Bare, BARE_PATH, CaseResult, load, measure, missed, Server } from './measure';
import {
  appEnv,
  botRequests,
  createBenchLinks,
  createLink,
  createOptionsLink,
  socialCardLink,
  startRedirect,
  startReference,
  verify,
  rulesLink,
  verifyCards,
  verifyRulesVisitors,
  verifyVisitors,
  visitorRequests,
} from './servers';

/** Visitors of the all-options cases (distinct client address + user agent pairs). */
const OPTION_VISITORS = 1000;
/** Loopback is the trusted proxy of the all-options cases: their visitors come by X-Forwarded-For. */
const TRUST_LOOPBACK = { TRUSTED_PROXIES: '127.0.0.1' };

const serverOf = (app: App): Server => ({ base: app.base, pid: app.proc.pid, admin: app.admin });

/** Runs a group of cases; a failure is reported for the cases of the group not measured yet. */
async function guarded(ctx: BenchContext, ids: readonly CaseId[], body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (e) {
    ctx.log(`failed (${ids.join(', ')}): ${(e as Error).stack ?? e}`);
    const done = new Set(ctx.results.map((r) => r.id));
    skip(
      ctx,
      ids.filter((id) => !done.has(id)),
      `failed: ${firstLine(e)}`,
    );
    ctx.notes.push(ids.length ? `${ids.join(', ')} failed: ${firstLine(e)}` : `an attempt failed and was retried: ${firstLine(e)}`);
  }
}

const wantProfile = (ctx: BenchContext, r: CaseResult) => ctx.opts.profile === 'always' || (ctx.opts.profile === 'auto' && missed(r));

/** An extra run (not in the table) with the redirect's CPU profiler on; its summary goes to the report. */
async function profileCase(ctx: BenchContext, app: App, caseId: string, paths: readonly string[], file: string): Promise<void> {
  ctx.log(`${caseId}: CPU profile of the redirect process over a ${ctx.opts.duration}s run (not counted in the table)`);
  const { result, profile } = await captureProfile(app.proc, file, () => load(ctx, serverOf(app), paths, ctx.opts.duration));
  if (!profile) ctx.log(`${caseId}: no profile written:\n${app.proc.output().slice(-2000)}`);
  else ctx.profiles.push({ caseId, file, rps: result.rps, text: summariseProfile(profile) });
}

/** Framework reference: plain Fastify, same route and answer as the bare server. */
async function fastifyCase(ctx: BenchContext, bare: Bare): Promise<void> {
  await guarded(ctx, ['fastify-bare'], async () => {
    const { proc, base } = await startReference(ctx, 'bench/redirect/fastify-server.ts', 'BENCH_BARE_PORT', {}, '/x', (s) => s === 302);
    try {
      const version = /fastify (\S+) on/.exec(proc.output())?.[1] ?? '?';
      const setup = `fastify ${version} (the copy Nest loads), one route, no logger/hooks`;
      ctx.results.push(await measure(ctx, bare, { id: 'fastify-bare', setup, server: { base, pid: proc.pid }, paths: BARE_PATH }));
    } finally {
      await proc.stop();
    }
  });
}

/** The card's floor: a bare node:http server answering with the redirect's own card writer. */
async function cardFloorCase(ctx: BenchContext, bare: Bare): Promise<void> {
  await guarded(ctx, ['card-floor'], async () => {
    const { proc, base } = await startReference(ctx, 'bench/redirect/card-floor-server.ts', 'BENCH_BARE_PORT', {}, '/x', (s) => s === 200);
    try {
      const setup = 'node:http, the card page of sendSocialCard (rendered once), no routing';
      ctx.results.push(await measure(ctx, bare, { id: 'card-floor', setup, server: { base, pid: proc.pid }, paths: BARE_PATH }));
    } finally {
      await proc.stop();
    }
  });
}

/** L1 hit on the embedded drivers: SQLite shards + in-process cache, in a fresh data dir. */
async function embeddedCase(ctx: BenchContext, bare: Bare, profileHere: boolean): Promise<void> {
  if (!ctx.inBudget()) return skip(ctx, ['l1-embedded'], 'time budget');
  await guarded(ctx, ['l1-embedded'], async () => {
    const env = appEnv(ctx, mkdtempSync(join(ctx.tmpDir, 'embedded-')), { DB_DRIVER: 'sqlite', CACHE_DRIVER: 'memory' });
    ctx.log('l1-embedded: creating 1 link through the generation app (SQLite + memory)');
    const [hot] = await createBenchLinks(ctx, env, 1, `embedded-${ctx.stamp}`);
    const profileFile = join(PROFILES_DIR, `redirect-${ctx.stamp}-l1-embedded.cpuprofile`);
    const app = await startRedirect(ctx, env, profileFile);
    try {
      await verify(app.base, [hot], 'l1-embedded');
      const paths = [`/${hot.code}`];
      const res = await measure(ctx, bare, { id: 'l1-embedded', setup: 'sqlite + memory cache, L1 on', server: serverOf(app), paths, bus: 'memory' });
      ctx.results.push(res);
      if (profileHere && wantProfile(ctx, res)) await profileCase(ctx, app, 'l1-embedded', paths, profileFile);
    } finally {
      await app.stop();
    }
  });
}

/** The all-options link on the embedded drivers: L1 hits, the rules, and a maxClicks counter in the in-process cache. */
async function embeddedOptionsCase(ctx: BenchContext, bare: Bare): Promise<void> {
  if (!ctx.inBudget()) return skip(ctx, ['l1-options'], 'time budget');
  await guarded(ctx, ['l1-options'], async () => {
    const env = appEnv(ctx, mkdtempSync(join(ctx.tmpDir, 'options-')), { DB_DRIVER: 'sqlite', CACHE_DRIVER: 'memory', ...TRUST_LOOPBACK });
    ctx.log('l1-options: creating the all-options link through the generation app (SQLite + memory)');
    const code = await createOptionsLink(ctx, env, `options-${ctx.stamp}`);
    const profileFile = join(PROFILES_DIR, `redirect-${ctx.stamp}-l1-options.cpuprofile`);
    const app = await startRedirect(ctx, env, profileFile);
    try {
      const paths = visitorRequests(code, OPTION_VISITORS);
      await verifyVisitors(app.base, paths, 'l1-options');
      const setup = `sqlite + memory cache, L1 on; ${OPTION_VISITORS} visitors via X-Forwarded-For`;
      const res = await measure(ctx, bare, { id: 'l1-options', setup, server: serverOf(app), paths, bus: 'memory' });
      ctx.results.push(res);
      if (wantProfile(ctx, res)) await profileCase(ctx, app, 'l1-options', paths, profileFile);
    } finally {
      await app.stop();
    }
  });
}

/** One redirect process of the real-stack cases: its settings over the stack env, and the cases measured on it. */
interface StackConfig {
  name: string;
  cases: CaseId[];
  env: Record<string, string>;
  setup: string;
  /** Kafka click bus: needs Kafka up and the invocation's topic. */
  kafka?: boolean;
}

function stackConfigs(ctx: BenchContext): StackConfig[] {
  const l1Off = { REDIRECT_L1_ENABLED: 'false' };
  const dbOnly = { REDIRECT_L1_ENABLED: 'false', REDIRECT_REDIS_ENABLED: 'false' };
  return [
    { name: 'redirect-l1', cases: ['l1-hot'], env: {}, setup: 'MariaDB + Redis Cluster, L1 on (defaults)' },
    {
      name: 'redirect-l1-kafka',
      // The conversions cases in the same process, right after: the plain link, the tracked one, the plain one again.
      cases: ['l1-kafka', 'l1-conversions-kafka', 'l1-conversions-off-after-kafka'],
      env: {},
      setup: 'MariaDB + Redis Cluster, L1 on, BUS_DRIVER=kafka',
      kafka: true,
    },
    {
      name: 'redirect-l1-visitors-kafka',
      cases: ['l1-visitors-kafka'],
      env: TRUST_LOOPBACK,
      kafka: true,
      setup: `MariaDB + Redis Cluster, L1 on, BUS_DRIVER=kafka; ${OPTION_VISITORS} visitors via X-Forwarded-For, no query string`,
    },
    {
      name: 'redirect-l1-options-kafka',
      cases: ['l1-options-kafka'],
      env: TRUST_LOOPBACK,
      kafka: true,
      setup: `MariaDB + Redis Cluster, L1 on, BUS_DRIVER=kafka; ${OPTION_VISITORS} visitors via X-Forwarded-For`,
    },
    {
      name: 'redirect-l1-rules-kafka',
      cases: ['l1-rules-kafka'],
      env: TRUST_LOOPBACK,
      kafka: true,
      setup: `MariaDB + Redis Cluster, L1 on, BUS_DRIVER=kafka; ${OPTION_VISITORS} visitors via X-Forwarded-For, no query string, 10 rules none holds`,
    },
    {
      name: 'redirect-l1-card-kafka',
      cases: ['l1-card-kafka'],
      env: TRUST_LOOPBACK,
      kafka: true,
      setup: `MariaDB + Redis Cluster, L1 on, BUS_DRIVER=kafka; ${OPTION_VISITORS} unfurling bots via X-Forwarded-For`,
    },
    {
      name: 'redirect-l1-bots-kafka',
      cases: ['l1-bots-kafka'],
      env: TRUST_LOOPBACK,
      kafka: true,
      setup: `MariaDB + Redis Cluster, L1 on, BUS_DRIVER=kafka; the same ${OPTION_VISITORS} unfurling bots via X-Forwarded-For, plain link (302)`,
    },
    { name: 'redirect-redis', cases: ['redis-hot', 'redis-many'], env: l1Off, setup: 'REDIRECT_L1_ENABLED=false' },
    { name: 'redirect-redis-kafka', cases: ['redis-kafka'], env: l1Off, setup: 'REDIRECT_L1_ENABLED=false BUS_DRIVER=kafka', kafka: true },
    { name: 'redirect-db', cases: ['db-hot', 'db-many'], env: dbOnly, setup: 'REDIRECT_L1_ENABLED=false REDIRECT_REDIS_ENABLED=false' },
    // With DB_CONCURRENCY (default 32, no queue) below the connection count the bulkhead sheds
    // the excess as 503 at once; this run admits every connection to show the shards' own rate.
    {
      name: 'redirect-db-admit',
      cases: ['db-many-admit'],
      env: { ...dbOnly, DB_CONCURRENCY: String(ctx.opts.connections) },
      setup: `L1 and Redis off, DB_CONCURRENCY=${ctx.opts.connections}`,
    },
  ];
}

/** The links of the real-stack cases: one hot code and the "many" codes; `verified` once every one was checked. */
interface StackLinks {
  hot: CreatedLink;
  many: CreatedLink[];
  verified: boolean;
  /** The all-options link's requests (its visitors), when an options case runs. */
  options?: string[];
  /** The social-card link's requests (unfurling bots), when the card case runs. */
  cards?: string[];
  /** The rules link's requests (the control's visitors), when the rules case runs. */
  rules?: string[];
  /** The code of the link with conversion tracking, when its case runs. */
  tracked?: string;
}

/** The requests a case sends. */
function pathsOf(id: CaseId, links: StackLinks): readonly string[] {
  if (id === 'l1-options-kafka') return links.options!;
  if (id === 'l1-card-kafka') return links.cards!;
  if (id === 'l1-rules-kafka') return links.rules!;
  if (id === 'l1-bots-kafka') return botRequests(links.hot.code, OPTION_VISITORS);
  if (id === 'l1-conversions-kafka') return [`/${links.tracked!}`];
  if (id === 'l1-visitors-kafka') return visitorRequests(links.hot.code, OPTION_VISITORS, '');
  return id.includes('-many') ? links.many.map((l) => `/${l.code}`) : [`/${links.hot.code}`];
}

/** Every link a configuration serves answers as it must before anything is measured. */
async function verifyConfig(app: App, c: StackConfig, ids: readonly CaseId[], links: StackLinks): Promise<void> {
  if (ids.includes('l1-options-kafka')) return verifyVisitors(app.base, links.options!, c.name);
  if (ids.includes('l1-card-kafka')) return verifyCards(app.base, links.cards!, c.name);
  if (ids.includes('l1-rules-kafka')) return verifyRulesVisitors(app.base, links.rules!, c.name);
  if (ids.includes('l1-conversions-kafka')) await verifyTracked(app.base, links.tracked!, c.name);
  // Every link once (this also fills Redis); the full check once, a sample after.
  await verify(app.base, links.verified ? [links.hot, ...links.many.filter((_, i) => i % 50 === 0)] : [links.hot, ...links.many], c.name);
  links.verified = true;
}

/** The tracked link answers a 302 to its target with a click id of its own on every click. */
async function verifyTracked(base: string, code: string, what: string): Promise<void> {
  const seen = new Set<string>();
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${base}/${code}`, { redirect: 'manual' });
    const location = res.headers.get('location') ?? '';
    const id = /\?sl_cid=([A-Za-z0-9_-]{22})$/.exec(location)?.[1];
    if (res.status !== 302 || !id) throw new Error(`${what}: GET /${code} answered ${res.status} location=${location}, expected 302 with a click id`);
    seen.add(id);
  }
  if (seen.size !== 3) throw new Error(`${what}: the tracked link gave the same click id twice`);
}

/**
 * The before/after cases once more on the `--base` revision's redirect: same links, stack, settings
 * and bare server, right after this checkout's runs.
 */
async function measureBase(
  ctx: BenchContext,
  bare: Bare,
  c: StackConfig,
  env: Record<string, string>,
  ids: readonly CaseId[],
  links: StackLinks,
): Promise<void> {
  const before = ids.filter((id) => BEFORE_AFTER_CASES.includes(id));
  if (!ctx.opts.base || !before.length) return;
  const app = await startRedirect(ctx, env, join(PROFILES_DIR, `redirect-${ctx.stamp}-${c.name}-base.cpuprofile`), ctx.opts.base);
  try {
    await verifyConfig(app, c, before, links);
    for (const id of before) {
      if (!ctx.inBudget()) {
        ctx.notes.push(`${id} not measured on --base: time budget`);
        return;
      }
      const setup = `${c.setup}; the redirect of ${ctx.opts.base}`;
      ctx.results.push(
        await measure(ctx, bare, { id, setup, server: serverOf(app), paths: pathsOf(id, links), bus: c.kafka ? 'kafka' : 'memory', base: true }),
      );
    }
  } finally {
    await app.stop();
  }
}

/** The cases the redirect's profile is recorded for when they miss a target. */
const PROFILED: ReadonlySet<string> = new Set([
  'l1-hot',
  'l1-kafka',
  'l1-options-kafka',
  'l1-card-kafka',
  'l1-bots-kafka',
  'redis-hot',
  'redis-many',
  'redis-kafka',
]);

/** One configuration, two attempts: another session restarting the stack mid-case voids the case once. */
async function runStackConfig(ctx: BenchContext, bare: Bare, c: StackConfig, stackEnv: Record<string, string>, links: StackLinks): Promise<void> {
  const ids = c.cases.filter((id) => wants(ctx.opts, id));
  const components: StackComponent[] = c.kafka ? ['redis', 'mysql', 'kafka'] : ['redis', 'mysql'];
  for (let attempt = 1; attempt <= 2; attempt++) {
    const pending = ids.filter((id) => !ctx.results.some((r) => r.id === id));
    if (!pending.length) break;
    if (!ctx.inBudget()) return skip(ctx, pending, 'time budget');
    const stack = await waitStackUp(components, Math.max(ctx.opts.waitStack, attempt > 1 ? 120 : 0), ctx.log);
    if (!stack.up) return skip(ctx, pending, `real stack ${attempt > 1 ? 'went down' : 'not up'} (${stack.detail})`);
    let restarted = '';
    const last = attempt === 2;
    await guarded(ctx, last ? pending : [], async () => {
      const busEnv = c.kafka ? await ensureBenchTopic(ctx, stack.env!) : {};
      const profileFile = join(PROFILES_DIR, `redirect-${ctx.stamp}-${c.name}.cpuprofile`);
      const app = await startRedirect(ctx, { ...stackEnv, ...c.env, ...busEnv }, profileFile);
      try {
        await verifyConfig(app, c, ids, links);
        for (const id of pending) {
          if (!ctx.inBudget()) {
            skip(ctx, [id], 'time budget');
            continue;
          }
          const paths = pathsOf(id, links);
          const res = await measure(ctx, bare, { id, setup: c.setup, server: serverOf(app), paths, bus: c.kafka ? 'kafka' : 'memory' });
          const now = stackState(components);
          if (!now.up || now.pids !== stack.pids) {
            restarted = `the stack was restarted or went down during ${id} (${now.up ? 'PIDs changed' : now.detail})`;
            ctx.log(restarted);
            ctx.notes.push(`${restarted}; ${last ? 'kept, marked' : 'measured again'}.`);
            if (!last) return;
            res.setup += ' ⚠ stack restarted during the case';
          }
          ctx.results.push(res);
          if (PROFILED.has(id) && wantProfile(ctx, res) && ctx.inBudget()) await profileCase(ctx, app, id, paths, profileFile);
        }
      } finally {
        await app.stop();
      }
      await measureBase(ctx, bare, c, { ...stackEnv, ...c.env, ...busEnv }, pending, links);
    });
    if (!last && !restarted && ids.some((id) => !ctx.results.some((r) => r.id === id))) ctx.log(`${c.name}: attempt ${attempt} failed, retrying`);
  }
}

/** The Redis floor, on the codes the runs before put into Redis (the redirect writes back). */
async function redisFloorCase(ctx: BenchContext, bare: Bare, stackEnv: Record<string, string>, many: readonly CreatedLink[]): Promise<void> {
  if (!ctx.inBudget()) return skip(ctx, ['redis-floor'], 'time budget');
  await guarded(ctx, ['redis-floor'], async () => {
    // The redirect's env (`--env` included), so the floor's Redis client is configured like the Redis cases'.
    const { proc, base } = await startReference(ctx, 'bench/redirect/redis-floor-server.ts', 'BENCH_FLOOR_PORT', stackEnv, `/${many[0].code}`, (s) => s !== 0);
    try {
      // Fails with the status when a code is not in Redis (run it with a redis-* or l1 case).
      await verify(
        base,
        many.filter((_, i) => i % 50 === 0),
        'redis-floor',
      );
      const setup = 'RedisClusterStore.get + JSON.parse + 302, nothing else';
      ctx.results.push(await measure(ctx, bare, { id: 'redis-floor', setup, server: { base, pid: proc.pid }, paths: many.map((l) => `/${l.code}`) }));
    } finally {
      await proc.stop();
    }
  });
}

/** The real-stack cases: links created once through the generation app, then one redirect per configuration. */
async function stackCases(ctx: BenchContext, bare: Bare, ids: readonly CaseId[], stack: StackState): Promise<void> {
  if (!stack.up) {
    ctx.notes.push(`Real-stack cases skipped: ${stack.detail}. Start it with \`bash deploy/local/stack.sh up\`.`);
    return skip(ctx, ids, 'real stack not up');
  }
  const s = stack.env!;
  const stackEnv = appEnv(ctx, mkdtempSync(join(ctx.tmpDir, 'stack-')), {
    DB_DRIVER: 'mysql',
    MYSQL_META_URL: s.MYSQL_META_URL,
    MYSQL_SHARDS: s.MYSQL_SHARDS,
    CACHE_DRIVER: 'redis',
    REDIS_CLUSTER_NODES: s.REDIS_CLUSTER_NODES,
  });
  const needMany = ids.some((c) => c.includes('-many') || c === 'redis-floor');
  const count = needMany ? ctx.opts.codes + 1 : 1;
  let created: CreatedLink[] | undefined;
  let options: string[] | undefined;
  let cards: string[] | undefined;
  let rules: string[] | undefined;
  let tracked: string | undefined;
  await guarded(ctx, ids, async () => {
    ctx.log(`real stack: creating ${count} links through the generation app (MariaDB shards + Redis Cluster)`);
    created = await createBenchLinks(ctx, stackEnv, count, `stack-${ctx.stamp}`);
    if (ids.includes('l1-options-kafka')) {
      ctx.log('real stack: creating the all-options link');
      const code = await createOptionsLink(ctx, stackEnv, `options-${ctx.stamp}`);
      options = visitorRequests(code, OPTION_VISITORS);
    }
    if (ids.includes('l1-rules-kafka')) {
      ctx.log('real stack: creating the link with 10 redirect rules');
      rules = visitorRequests(await createLink(ctx, stackEnv, rulesLink(`rules-${ctx.stamp}`)), OPTION_VISITORS, '');
    }
    if (ids.includes('l1-conversions-kafka')) {
      ctx.log('real stack: creating the link with conversion tracking');
      tracked = await createLink(ctx, stackEnv, { url: `https://example.com/bench/conversions-${ctx.stamp}`, trackConversions: true });
    }
    if (ids.includes('l1-card-kafka')) {
      ctx.log('real stack: creating the social-card link');
      cards = botRequests(await createLink(ctx, stackEnv, socialCardLink(`card-${ctx.stamp}`)), OPTION_VISITORS);
    }
  });
  if (!created) return;
  const links: StackLinks = { hot: created[0], many: created.slice(needMany ? 1 : 0), verified: false, options, cards, rules, tracked };
  for (const c of stackConfigs(ctx)) await runStackConfig(ctx, bare, c, stackEnv, links);
  await safetyCases(ctx, bare, stackEnv);
  if (wants(ctx.opts, 'redis-floor')) await redisFloorCase(ctx, bare, stackEnv, links.many);
}

/** Every wanted case, in the order of the table; returns the bare server's runs and the stack's state at the start. */
export async function runCases(ctx: BenchContext): Promise<{ bare: Bare; stackAtStart: string }> {
  const { opts } = ctx;
  const stackIds = STACK_CASES.filter((id) => wants(opts, id));
  const stack = stackIds.length ? await waitStackUp(['redis', 'mysql'], opts.waitStack, ctx.log) : stackState();
  const stackAtStart = stack.up ? stack.detail : `not up (${stack.detail})`;
  ctx.log(`loader ${opts.loader}; real stack: ${stackAtStart}`);

  // The ceiling: kept running on the server core (idle while a case runs) and measured before every case run.
  const { proc, base } = await startReference(ctx, 'bench/redirect/bare-server.ts', 'BENCH_BARE_PORT', {}, '/x', (s) => s === 302);
  const bare: Bare = { base, pid: proc.pid, runs: [] };
  try {
    ctx.log(`bare: warm-up ${opts.warmup}s`);
    await load(ctx, bare, BARE_PATH, opts.warmup);
    if (wants(opts, 'fastify-bare')) await fastifyCase(ctx, bare);
    if (wants(opts, 'card-floor')) await cardFloorCase(ctx, bare);
    // The stack's L1 case is the one profiled, unless there is none.
    if (wants(opts, 'l1-embedded')) await embeddedCase(ctx, bare, !stack.up || !wants(opts, 'l1-hot') || opts.profile === 'always');
    if (wants(opts, 'l1-options')) await embeddedOptionsCase(ctx, bare);
    if (stackIds.length) await stackCases(ctx, bare, stackIds, stack);
  } finally {
    await proc.stop();
  }
  return { bare, stackAtStart };
}
