/**
 * The trust-and-safety cases (README.md, "Cases"; docs/design.md, "Trust and safety": "the checks
 * cost the redirect nothing on its hot path"): one redirect process on the real stack with the
 * Kafka click bus serves one link whose health the dead-link checks recorded, first with the safety
 * features off, then on, then off again (the control on both sides of the case, so that a drift of the
 * shared machine shows), each side by side with the bare server, in the same invocation. What
 * changes between the two is everything the safety context runs: a generation app beside the
 * redirect with the threat feeds loaded (four feeds in their published formats, 100 000 entries,
 * read again every 5 s), the dead-link checks on (budget 20/s, first checks of new links and the
 * leased rounds), the tenant's broken-link page on (held by the redirect in memory), and links made
 * meanwhile checked and marked. Both cases have the same generation app making 2 links a second
 * (so the only difference is the safety features, not the creates).
 */
import { mkdtempSync, writeFileSync } from 'fs';
import { join } from 'path';
import { App, byLabel, keepAliveAgent, metricsOf, send, sleep, startApp, withoutAppSettings } from '@shortlink/harness';
import { startTargetTestServer, TargetTestServer } from '@shortlink/testing';
import { StackState, waitStackUp } from '../shared/stack';
import { CaseId, wants } from './cli';
import { BenchContext, PROFILES_DIR, skip } from './context';
import { ensureBenchTopic } from './kafka';
import { Bare, measure } from './measure';
import { startRedirect } from './servers';

export const SAFETY_CASES: readonly CaseId[] = ['l1-safety-off-kafka', 'l1-safety-kafka', 'l1-safety-off-after-kafka'];

/** Entries per feed (URLhaus, PhishTank, OpenPhish) and in the host list: 100 000 in all. */
const FEED_ENTRIES = 25_000;

/** The four feeds in their published formats, with made-up hosts that no bench link uses. */
function writeFeeds(dir: string): string {
  const url = (feed: string, i: number) => `https://${feed}-${i}.threat-bench.example/p/${i}`;
  const rows = (n: number, row: (i: number) => string) => Array.from({ length: n }, (_, i) => row(i)).join('\n');
  writeFileSync(
    join(dir, 'urlhaus.csv'),
    `# id,dateadded,url,url_status,last_online,threat,tags,urlhaus_link,reporter\n` +
      rows(
        FEED_ENTRIES,
        (i) =>
          `"${i}","2026-12-07 08:02:04","${url('uh', i)}","online","2026-12-07 08:02:04","malware_download","exe","https://urlhaus.abuse.ch/url/${i}/","bench"`,
      ) +
      '\n',
  );
  writeFileSync(
    join(dir, 'phishtank.json'),
    JSON.stringify(
      Array.from({ length: FEED_ENTRIES }, (_, i) => ({ phish_id: String(i), url: url('pt', i), verified: 'yes', online: 'yes', target: 'Other' })),
    ),
  );
  writeFileSync(join(dir, 'openphish.txt'), rows(FEED_ENTRIES, (i) => url('op', i)) + '\n');
  writeFileSync(join(dir, 'hosts.txt'), rows(FEED_ENTRIES, (i) => `0.0.0.0 ads-${i}.threat-bench.example`) + '\n');
  const f = (name: string) => join(dir, name);
  return `urlhaus:${f('urlhaus.csv')},phishtank:${f('phishtank.json')},openphish:${f('openphish.txt')},hosts:${f('hosts.txt')}`;
}

/** The generation app's settings with the safety features on: feeds, checks of `*.checks.test` on the bench's target server. */
function safetyOn(feeds: string): Record<string, string> {
  return {
    URL_REPUTATION_DRIVER: 'feeds',
    URL_REPUTATION_FEEDS: feeds,
    URL_REPUTATION_REFRESH_SECONDS: '5',
    LINK_CHECK_REQUESTS_PER_SECOND: '20',
    LINK_CHECK_ALLOW_PRIVATE: 'true',
    LINK_CHECK_HOSTS: '*.checks.test=127.0.0.1',
    LINK_CHECK_HOST_INTERVAL_MS: '0',
    LINK_CHECK_FAILURES_TO_BREAK: '1',
    LINK_CHECK_TIMEOUT_MS: '2000',
    SAFETY_JOBS_INTERVAL_MS: '1000',
  };
}

/** The same app with every safety feature off. */
const SAFETY_OFF: Record<string, string> = { URL_REPUTATION_DRIVER: 'none', LINK_CHECK_REQUESTS_PER_SECOND: '0' };

async function call(ctx: BenchContext, gen: App, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gen.base}${path}`, {
    method,
    headers: { 'x-api-key': ctx.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Links made at `perSecond` through `gen` until stopped, half to a target that answers, half to one that is gone. */
function creator(ctx: BenchContext, gen: App, targets: TargetTestServer, tag: string, perSecond: number): { stop: () => Promise<number> } {
  let stopped = false;
  let made = 0;
  const done = (async () => {
    for (let i = 0; !stopped; i++) {
      const started = Date.now();
      const host = i % 2 ? 'gone' : 'ok';
      const res = await call(ctx, gen, 'POST', '/api/v1/links', { url: `http://${host}.checks.test:${targets.port}/bench/${tag}/${i}` }).catch(() => null);
      if (res?.status === 201) made++;
      await sleep(Math.max(0, 1000 / perSecond - (Date.now() - started)));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      return made;
    },
  };
}

const checksOf = async (gen: App) => {
  const m = await metricsOf(gen.admin).catch(() => null);
  return m ? [...byLabel(m, 'shortlink_link_checks_total', 'state').values()].reduce((a, b) => a + b, 0) : 0;
};

/**
 * `l1-safety-off-kafka`, then `l1-safety-kafka`, on one redirect process and one link (its health
 * recorded "ok" by the dead-link checks before either is measured).
 */
export async function safetyCases(ctx: BenchContext, bare: Bare, stackEnv: Record<string, string>): Promise<void> {
  const ids = SAFETY_CASES.filter((id) => wants(ctx.opts, id));
  if (!ids.length) return;
  if (!ctx.inBudget()) return skip(ctx, ids, 'time budget');
  const stack: StackState = await waitStackUp(['redis', 'mysql', 'kafka'], ctx.opts.waitStack, ctx.log);
  if (!stack.up) return skip(ctx, ids, `real stack not up (${stack.detail})`);
  const targets = await startTargetTestServer();
  const apps: App[] = [];
  const startGeneration = async (extra: Record<string, string>) => {
    const gen = await startApp('generation', { ...stackEnv, ...extra }, { baseEnv: withoutAppSettings(), group: ctx.group, timeoutMs: 90_000 });
    apps.push(gen);
    return gen;
  };
  const stopGeneration = async (gen: App) => {
    await gen.stop();
    apps.splice(apps.indexOf(gen), 1);
  };
  try {
    const busEnv = await ensureBenchTopic(ctx, stack.env!);
    const feeds = writeFeeds(mkdtempSync(join(ctx.tmpDir, 'feeds-')));
    const tag = `safety-${ctx.stamp}`;
    const target = `http://ok.checks.test:${targets.port}/bench/${tag}/measured`;

    // The measured link, made with the features on: its health recorded by the first check of the instance that made it.
    ctx.log('l1-safety: creating the measured link with the safety features on; waiting for its dead-link check');
    let gen = await startGeneration(safetyOn(feeds));
    const made = await call(ctx, gen, 'POST', '/api/v1/links', { url: target });
    if (made.status !== 201) throw new Error(`creating the measured link: ${made.status} ${JSON.stringify(made.body)}`);
    const code = made.body.code as string;
    type Health = { state?: string; lastStatus?: number } | null;
    const healthNow = async () => (await call(ctx, gen, 'GET', `/api/v1/links/${code}`)).body.health as Health;
    let health = await healthNow();
    for (let i = 0; i < 120 && health?.state !== 'ok'; i++) {
      await sleep(500);
      health = await healthNow();
    }
    if (health?.state !== 'ok') throw new Error(`the measured link's health was not recorded within 60 s: ${JSON.stringify(health)}`);
    ctx.log(`l1-safety: /${code} → ${target}, health ${JSON.stringify(health)}`);
    await stopGeneration(gen);

    const app = await startRedirect(ctx, { ...stackEnv, ...busEnv }, join(PROFILES_DIR, `redirect-${ctx.stamp}-l1-safety.cpuprofile`));
    try {
      const agent = keepAliveAgent();
      const res = await send(agent, app.base, `/${code}`);
      agent.destroy();
      if (res.status !== 302 || res.location !== target)
        throw new Error(`l1-safety: GET /${code} answered ${res.status} ${res.location}, expected 302 ${target}`);
      const paths = [`/${code}`];
      const plan: Array<{ id: CaseId; on: boolean }> = [
        { id: 'l1-safety-off-kafka', on: false },
        { id: 'l1-safety-kafka', on: true },
        // The control again after the case: a machine that got busier or quieter meanwhile shows as a gap between the two controls.
        { id: 'l1-safety-off-after-kafka', on: false },
      ];
      for (const { id, on } of plan) {
        if (!ids.includes(id)) continue;
        if (!ctx.inBudget()) {
          skip(ctx, [id], 'time budget');
          continue;
        }
        gen = await startGeneration(on ? safetyOn(feeds) : SAFETY_OFF);
        const settings = await call(ctx, gen, 'PUT', '/api/v1/settings/broken-links', on ? { mode: 'page' } : { mode: 'target' });
        if (settings.status !== 200) throw new Error(`broken-link settings: ${settings.status} ${JSON.stringify(settings.body)}`);
        await sleep(3000); // the feeds read, the redirect's tenants refreshed
        const creates = creator(ctx, gen, targets, `${tag}-${id}`, 2);
        const checksBefore = await checksOf(gen);
        const requestsBefore = targets.requests.length;
        const setup = on
          ? 'MariaDB + Redis Cluster, L1 on, BUS_DRIVER=kafka; the link’s health recorded (ok); beside it a generation app with 4 threat feeds (100 000 entries, read every 5 s), dead-link checks on (20/s), the tenant’s broken-link page on, 2 links/s made and checked'
          : 'MariaDB + Redis Cluster, L1 on, BUS_DRIVER=kafka; the same link; beside it a generation app with URL_REPUTATION_DRIVER=none and LINK_CHECK_REQUESTS_PER_SECOND=0, the tenant’s broken-link setting the default, 2 links/s made';
        try {
          ctx.results.push(await measure(ctx, bare, { id, setup, server: { base: app.base, pid: app.proc.pid, admin: app.admin }, paths, bus: 'kafka' }));
        } finally {
          const checks = (await checksOf(gen)) - checksBefore;
          const createdLinks = await creates.stop();
          ctx.notes.push(
            `${id}: during the case the generation app beside the redirect made ${createdLinks} links, ran ${checks} dead-link checks ` +
              `and the target server took ${targets.requests.length - requestsBefore} requests.`,
          );
          ctx.log(`${id}: ${createdLinks} links made, ${checks} checks, ${targets.requests.length - requestsBefore} requests to the targets`);
          if (on) await call(ctx, gen, 'PUT', '/api/v1/settings/broken-links', { mode: 'target' }).catch(() => undefined);
          await stopGeneration(gen);
        }
      }
    } finally {
      await app.stop();
    }
  } finally {
    for (const gen of apps) await gen.stop();
    await targets.close();
  }
}
