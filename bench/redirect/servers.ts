/**
 * The processes a case measures: the reference servers (bare node:http, plain Fastify, the Redis
 * floor), the redirect app (pinned, with the shipped V8 flags and the profile hook), and the
 * generation app that creates the links first. Each app process gets its own free public and admin
 * ports, the invocation's keys and API key, and no setting from the bench's own environment.
 */
import { readFileSync } from 'fs';
import * as http from 'http';
import { join } from 'path';
import {
  App,
  CreatedLink,
  createLinks,
  freePort,
  keepAliveAgent,
  Proc,
  PROFILE_HOOK,
  profileHookEnv,
  REPO_ROOT,
  requestOf,
  send,
  sleep,
  startApp,
  startProcess,
  whenServing,
  withoutAppSettings,
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
    return await createLinks({
      generation: gen.base,
      apiKey: ctx.apiKey,
      count,
      url: (i) => `https://example.com/bench/${tag}/${i}?ref=redirect-bench`,
      retries: 5,
    });
  } finally {
    await gen.stop();
  }
}

/** The V8 flags `npm run start:redirect` runs the redirect with (e.g. the young-generation size), so the bench measures the shipped setup. */
export const REDIRECT_NODE_FLAGS: readonly string[] = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).scripts['start:redirect'] as string)
  .split(/\s+/)
  .filter((a) => /^--max-(semi|old)-space-size=\d+$/.test(a));

/**
 * The redirect app on the server core, with the profile hook preloaded (dormant until SIGWINCH);
 * `cwd` is another revision's exported tree (`--base`).
 */
export function startRedirect(ctx: BenchContext, env: Record<string, string>, profileFile: string, cwd?: string): Promise<App> {
  return startApp(
    'redirect',
    { ...env, ...profileHookEnv(profileFile) },
    {
      cwd,
      core: SERVER_CORE,
      nodeArgs: REDIRECT_NODE_FLAGS,
      preload: [PROFILE_HOOK],
      baseEnv: withoutAppSettings(),
      group: ctx.group,
      timeoutMs: 90_000,
    },
  );
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
    await whenServing(
      proc,
      entry,
      async () => ready((await fetch(`${base}${probePath}`, { redirect: 'manual', signal: AbortSignal.timeout(3000) })).status),
      20_000,
    );
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
      if (res.status !== 302 || res.location !== l.url)
        throw new Error(`${what}: GET /${l.code} answered ${res.status} location=${res.location}, expected 302 ${l.url}`);
    }
  } finally {
    agent.destroy();
  }
}

/**
 * The all-options link of the `l1-options` cases (docs/design.md, "Link options"): every option but
 * the password (whose answer is a form, not a redirect) and the social card (bots only), maxClicks
 * high enough never to run out.
 */
export function allOptionsLink(tag: string): Record<string, unknown> {
  return {
    url: `https://example.com/bench/${tag}/default?src=bench`,
    title: 'bench: every option',
    tags: ['bench'],
    maxClicks: 1_000_000_000,
    utm: { source: 'bench', medium: 'load', campaign: tag },
    forwardQuery: true,
    geoTargets: { GB: 'https://example.co.uk/bench', DE: 'https://example.de/bench' },
    deviceTargets: { ios: 'https://example.com/bench/ios', android: 'https://example.com/bench/android' },
    variants: [
      { url: 'https://example.com/bench/a', weight: 1 },
      { url: 'https://example.com/bench/b', weight: 1 },
    ],
    clicksPerIpPerMinute: 10_000,
    // An app URL scheme on both devices: the bench's clients send no Accept, so they get the
    // fallback's 302 (the device target) after the app target was looked at.
    appTargets: { ios: 'benchapp://open/ios', android: 'benchapp://open/android' },
    // People get the redirect; the card is only for unfurling bots (the l1-card-kafka case).
    social: { title: 'bench: every option', description: 'The card of the all-options link', image: 'https://example.com/bench/card.png' },
    crawlable: true,
    passwordRememberHours: 24,
  };
}

const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
];

/**
 * The requests of an all-options case: `visitors` distinct visitors (address through the trusted
 * proxy 127.0.0.1, and a user agent), one in ten from Great Britain and one in ten from Germany
 * (geo targets), the others from the US, a quarter of those on iOS or Android (device targets) and
 * the rest split by the variants; each carries a query string to forward. With 1000 visitors at
 * ~20k rps, each sends ~1200 a minute, under the link's clicksPerIpPerMinute of 10 000.
 */
export function visitorRequests(code: string, visitors: number, query = '?ref=bench'): string[] {
  return Array.from({ length: visitors }, (_, i) => {
    const ip = i % 10 === 0 ? `81.2.69.${(i / 10) % 250}` : i % 10 === 1 ? `5.9.${((i / 10) % 250) | 0}.1` : `8.8.${(i >> 8) & 255}.${i & 255}`;
    return `/${code}${query}\tX-Forwarded-For: ${ip}\tUser-Agent: ${UAS[i % 8 < 6 ? i % 2 : 2 + (i % 2)]}`;
  });
}

/** Starts the generation app, creates one link (`body` as POST /api/v1/links takes it) through its API, stops it. */
export async function createLink(ctx: BenchContext, env: Record<string, string>, body: Record<string, unknown>): Promise<string> {
  const gen = await startApp('generation', env, { baseEnv: withoutAppSettings(), group: ctx.group, timeoutMs: 90_000 });
  try {
    const res = await fetch(`${gen.base}/api/v1/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ctx.apiKey },
      body: JSON.stringify(body),
    });
    const created = (await res.json()) as { code?: string };
    if (res.status !== 201 || !created.code) throw new Error(`creating the link ${JSON.stringify(body.title)}: ${res.status} ${JSON.stringify(created)}`);
    return created.code;
  } finally {
    await gen.stop();
  }
}

/** The URL of the rules link: where every bench visitor goes, since none of its rules holds for them. */
export const RULES_LINK_URL = 'https://example.com/bench/rules';

/**
 * A link with 10 redirect rules (docs/design.md, "Redirect rules") none of which holds for the
 * bench's visitors (visitorRequests without a query string), so every request evaluates all ten:
 * each kind of condition once, the last rule two conditions of which the first holds on phones.
 */
export function rulesLink(tag: string): Record<string, unknown> {
  const rule = (n: number, ...conditions: Record<string, unknown>[]) => ({ url: `https://example.com/bench/${tag}/rule-${n}`, conditions });
  return {
    url: RULES_LINK_URL,
    title: 'bench: 10 redirect rules',
    redirectRules: [
      rule(1, { type: 'language', value: 'fr' }),
      rule(2, { type: 'query-param', name: 'campaign' }),
      rule(3, { type: 'ip-address', value: '10.0.0.0/8' }),
      rule(4, { type: 'before-date', value: '2020-01-01T00:00:00Z' }),
      rule(5, { type: 'after-date', value: '2099-01-01T00:00:00Z' }),
      rule(6, { type: 'os', value: 'chromeos' }),
      rule(7, { type: 'browser', value: 'firefox' }),
      rule(8, { type: 'country', value: 'FR' }),
      rule(9, { type: 'city', value: 'Paris' }),
      rule(10, { type: 'device', value: 'mobile' }, { type: 'language', value: 'de' }),
    ],
  };
}

/** Every visitor of the rules case must get a 302 to the link's own URL (no rule holds). */
export async function verifyRulesVisitors(base: string, requests: readonly string[], what: string): Promise<void> {
  const agent = keepAliveAgent();
  try {
    for (const line of requests.filter((_, i) => i % 10 < 4)) {
      const { path, headers } = requestOf(line);
      const res = await sendWith(agent, base, path, headers);
      if (res.status !== 302 || res.location !== RULES_LINK_URL)
        throw new Error(`${what}: GET ${path} as ${JSON.stringify(headers)} answered ${res.status} location=${res.location}, expected ${RULES_LINK_URL}`);
    }
  } finally {
    agent.destroy();
  }
}

/** The all-options link, created through the generation app. */
export const createOptionsLink = (ctx: BenchContext, env: Record<string, string>, tag: string) => createLink(ctx, env, allOptionsLink(tag));

/** A link with a social card (docs/design.md, "Social cards"): unfurling bots get its page, people the redirect. */
export function socialCardLink(tag: string): Record<string, unknown> {
  return {
    url: `https://example.com/bench/${tag}/card`,
    title: 'bench: social card',
    social: { title: 'A card for the bench', description: 'What an unfurling bot is shown', image: 'https://example.com/bench/card.png' },
  };
}

/** Unfurling bots that `isbot` knows as previewers, each its own address. */
const PREVIEWER_UAS = [
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'Twitterbot/1.0',
  'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  'TelegramBot (like TwitterBot)',
];

/** The requests of the card case: `visitors` bot requests from distinct addresses. */
export function botRequests(code: string, visitors: number): string[] {
  return Array.from(
    { length: visitors },
    (_, i) => `/${code}\tX-Forwarded-For: 8.8.${(i >> 8) & 255}.${i & 255}\tUser-Agent: ${PREVIEWER_UAS[i % PREVIEWER_UAS.length]}`,
  );
}

/** Every bot of the card case must get the card page (200, HTML with the Open Graph title), not a redirect. */
export async function verifyCards(base: string, requests: readonly string[], what: string): Promise<void> {
  for (const line of requests.slice(0, PREVIEWER_UAS.length)) {
    const { path, headers } = requestOf(line);
    const res = await fetch(`${base}${path}`, { headers, redirect: 'manual' });
    const html = await res.text();
    if (res.status !== 200 || !html.includes('og:title'))
      throw new Error(`${what}: GET ${path} as ${headers['User-Agent']} answered ${res.status} ${html.slice(0, 200)}, expected the card page`);
  }
}

/** Every visitor of an all-options case must get a 302 to one of the link's targets, with the UTM and forwarded query. */
export async function verifyVisitors(base: string, requests: readonly string[], what: string): Promise<void> {
  const agent = keepAliveAgent();
  const seen = new Set<string>();
  try {
    for (const line of requests.filter((_, i) => i % 10 < 4)) {
      const { path, headers } = requestOf(line);
      let res = await sendWith(agent, base, path, headers);
      for (let attempt = 1; attempt < 20 && res.status !== 302; attempt++) {
        await sleep(250);
        res = await sendWith(agent, base, path, headers);
      }
      const location = res.location ?? '';
      if (res.status !== 302 || !/^https:\/\/example\.(com|co\.uk|de)\/bench[/?].*utm_source=bench.*ref=bench/.test(location)) {
        throw new Error(`${what}: GET ${path} as ${JSON.stringify(headers)} answered ${res.status} location=${location}`);
      }
      seen.add(location.split('?')[0]);
    }
  } finally {
    agent.destroy();
  }
  // Geo (2), device (2) and both variants: every branch of the rules is on the measured path.
  if (seen.size < 6) throw new Error(`${what}: only ${[...seen].join(', ')} reached`);
}

/** One GET with headers over a keep-alive agent (the harness's `send` sends none). */
function sendWith(agent: http.Agent, base: string, path: string, headers: Record<string, string>): Promise<{ status: number; location: string | null }> {
  const url = new URL(path, base);
  return new Promise((resolve) => {
    const req = http.request({ agent, host: url.hostname, port: url.port, path: url.pathname + url.search, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: (res.headers.location as string | undefined) ?? null }));
    });
    req.setTimeout(5000, () => req.destroy());
    req.on('error', () => resolve({ status: 0, location: null }));
    req.end();
  });
}
