/**
 * The processes a case measures: the reference servers (bare node:http, plain Fastify, the Redis
 * floor), the redirect app (pinned, with the shipped V8 flags and the profile hook), and the
 * generation app that creates the links first. Each app process gets its own free public and admin
 * ports, the invocation's keys and API key, and no setting from the bench's own environment.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import {
  App, CreatedLink, createLinks, freePort, keepAliveAgent, Proc, PROFILE_HOOK, profileHookEnv, REPO_ROOT, send, sleep, startApp, startProcess, whenServing, withoutAppSettings,
} from '@shortlink/harness';
import { BenchContext, DOMAIN, SERVER_CORE } from './context';

/** Base env of the apps: domain, data dir, keys, the bench's fixed settings; then the case's own, then `--env`. */
export function appEnv(ctx: BenchContext, dataDir: string, extra: Record<string, string>): Record<string, string> {
  return {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
    SHORTLINK_DATA_DIR: dataDir,
    SHORTLINK_BOOTSTRAP_API_KEY: ctx.apiKey,
    ...ctx.secrets,
    BUS_DRIVER: 'memory',
    RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    RATE_LIMIT_GLOBAL_PER_SECOND: '0',
    ...extra,
    ...ctx.opts.env,
  };
}

/** Starts the generation app (unpinned, setup only), creates `count` links through its API, stops it. */
export async function createBenchLinks(ctx: BenchContext, env: Record<string, string>, count: number, tag: string): Promise<CreatedLink[]> {
  const gen = await startApp('generation', env, { baseEnv: withoutAppSettings(), group: ctx.group, timeoutMs: 90_000 });
  try {
    return await createLinks({ generation: gen.base, apiKey: ctx.apiKey, count, url: (i) => `https://example.com/bench/${tag}/${i}?ref=redirect-bench`, retries: 5 });
  } finally {
    await gen.stop();
  }
}

/** The V8 flags `npm run start:redirect` runs the redirect with (e.g. the young-generation size), so the bench measures the shipped setup. */
export const REDIRECT_NODE_FLAGS: readonly string[] = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).scripts['start:redirect'] as string)
  .split(/\s+/)
  .filter((a) => /^--max-(semi|old)-space-size=\d+$/.test(a));

/** The redirect app on the server core, with the profile hook preloaded (dormant until SIGWINCH). */
export function startRedirect(ctx: BenchContext, env: Record<string, string>, profileFile: string): Promise<App> {
  return startApp('redirect', { ...env, ...profileHookEnv(profileFile) }, {
    core: SERVER_CORE,
    nodeArgs: REDIRECT_NODE_FLAGS,
    preload: [PROFILE_HOOK],
    baseEnv: withoutAppSettings(),
    group: ctx.group,
    timeoutMs: 90_000,
  });
}

/**
 * A reference server of this bench (a TypeScript entry that listens on the port named by `portVar`)
 * on the server core, on a free port; ready once GET `probePath` answers as `ready` says.
 */
export async function startReference(
  ctx: BenchContext,
  entry: string,
  portVar: string,
  env: Record<string, string>,
  probePath: string,
  ready: (status: number) => boolean,
): Promise<{ proc: Proc; base: string }> {
  const port = await freePort();
  const proc = startProcess(entry, { ...env, [portVar]: String(port) }, { core: SERVER_CORE, baseEnv: withoutAppSettings(), group: ctx.group });
  const base = `http://127.0.0.1:${port}`;
  try {
    await whenServing(proc, entry, async () => ready((await fetch(`${base}${probePath}`, { redirect: 'manual', signal: AbortSignal.timeout(3000) })).status), 20_000);
  } catch (e) {
    await proc.stop();
    throw e;
  }
  return { proc, base };
}

/** Every link must answer 302 with its own target before it is measured. */
export async function verify(base: string, links: readonly CreatedLink[], what: string): Promise<void> {
  const agent = keepAliveAgent();
  try {
    for (const l of links) {
      let res = await send(agent, base, `/${l.code}`);
      // e.g. a Bloom filter still being built on a fresh in-memory store
      for (let attempt = 1; attempt < 20 && res.status !== 302; attempt++) {
        await sleep(250);
        res = await send(agent, base, `/${l.code}`);
      }
      if (res.status !== 302 || res.location !== l.url) throw new Error(`${what}: GET /${l.code} answered ${res.status} location=${res.location}, expected 302 ${l.url}`);
    }
  } finally {
    agent.destroy();
  }
}
