/**
 * Two revisions head to head (bench/redirect/README.md, "A/B of two revisions"): the embedded
 * redirect (L1 hit, one plain link) of an exported tree `AB_BASE` and of `AB_TIP` (this checkout by
 * default), both on core 0, loaded at the same time by a loader each on core 1; the result is the
 * tip's rps per CPU second over the base's, per run and their median. The same method as the
 * bench's side-by-side column, with the base in place of the bare server: both see the same machine.
 *
 *   git archive <rev> | tar -x -C /tmp/base && ln -s $PWD/node_modules /tmp/base/node_modules
 *   AB_BASE=/tmp/base node -r ./tools/register.js bench/redirect/ab.ts
 */
import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { closedLoop, createLinks, median, ProcessGroup, REPO_ROOT, serverSecrets, startApp, withoutAppSettings } from '@shortlink/harness';

async function main() {
  const group = new ProcessGroup();
  const tmp = mkdtempSync(join(tmpdir(), 'ab-side-'));
  const rig = { tmpDir: tmp, group, core: '1' };
  const key = 'sl_ab_side_key_0123456789abcdef';
  const secrets = serverSecrets();
  if (!process.env.AB_BASE) throw new Error('AB_BASE must name the exported tree of the base revision');
  const trees = { base: process.env.AB_BASE, tip: process.env.AB_TIP ?? REPO_ROOT };
  const runs = Number(process.env.AB_RUNS ?? 7);
  const servers: Record<string, { base: string; pid: number; path: string }> = {};
  try {
    for (const [name, cwd] of Object.entries(trees)) {
      const env = {
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        HOST: '127.0.0.1',
        SHORTLINK_DEFAULT_DOMAIN: 'bench.shortlink.test',
        SHORTLINK_DATA_DIR: mkdtempSync(join(tmp, `${name}-`)),
        SHORTLINK_BOOTSTRAP_API_KEY: key,
        ...secrets,
        DB_DRIVER: 'sqlite',
        CACHE_DRIVER: 'memory',
        BUS_DRIVER: 'memory',
        RATE_LIMIT_PER_IP_PER_MINUTE: '0',
        RATE_LIMIT_GLOBAL_PER_SECOND: '0',
      };
      const gen = await startApp('generation', env, { cwd, baseEnv: withoutAppSettings(), group, timeoutMs: 90_000 });
      const [link] = await createLinks({ generation: gen.base, apiKey: key, count: 1, url: () => 'https://example.com/bench/ab?ref=redirect-bench' });
      await gen.stop();
      const app = await startApp('redirect', env, {
        cwd,
        core: '0',
        nodeArgs: ['--max-semi-space-size=64'],
        baseEnv: withoutAppSettings(),
        group,
        timeoutMs: 90_000,
      });
      servers[name] = { base: app.base, pid: app.proc.pid, path: `/${link.code}` };
    }
    const run = (name: string, seconds: number) =>
      closedLoop(rig, { loader: 'autocannon', base: servers[name].base, paths: [servers[name].path], connections: 100, seconds, cpuOf: servers[name].pid });
    await Promise.all([run('base', 3), run('tip', 3)]);
    const ratios: number[] = [];
    for (let i = 0; i < runs; i++) {
      const [b, t] = await Promise.all([run('base', 10), run('tip', 10)]);
      const ratio = t.rps / t.cpu! / (b.rps / b.cpu!);
      ratios.push(ratio);
      console.log(
        `run ${i + 1}: base ${Math.round(b.rps)} rps at ${b.cpu?.toFixed(0)}% | tip ${Math.round(t.rps)} rps at ${t.cpu?.toFixed(0)}% | tip/base per CPU ${ratio.toFixed(3)}`,
      );
    }
    console.log(`median tip/base per CPU second: ${median(ratios).toFixed(3)} (min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)})`);
  } finally {
    await group.stopAll();
  }
}
main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
