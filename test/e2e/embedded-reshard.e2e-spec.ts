import { existsSync, mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, eventually, metric, metricsOf, RunningProcess, startCommand, withoutAppSettings } from '@shortlink/harness';
import { API_KEY, createLink, redirectOf, startEmbedded } from './support';

/** `npm run reshard -- <args>` against the embedded process's data directory. */
async function reshard(args: string[], dataDir: string): Promise<{ code: number | null; out: string }> {
  const proc = startCommand(process.execPath, ['-r', './tools/register.js', 'tools/cli/src/reshard.ts', ...args], {
    env: { SHORTLINK_DATA_DIR: dataDir, LOG_LEVEL: 'warn', SHARD_RING_POLL_MS: '200', SHARD_RING_LEASE_MS: '2000' },
    baseEnv: withoutAppSettings(),
  });
  await proc.exited;
  return { code: proc.child.exitCode, out: proc.output() };
}

/**
 * Online resharding on the embedded profile: the same reshard tool, where a new shard is a new SQLite file.
 * The running process (`npm start`) switches to each new ring version without a restart.
 */
describe('resharding the embedded profile (npm start)', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;
  const links: Array<{ code: string; url: string }> = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-reshard-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, SHARD_RING_POLL_MS: '200', SHARD_RING_LEASE_MS: '2000' }));
    for (let i = 0; i < 150; i++) {
      const url = `https://example.com/embedded-reshard/${i}`;
      links.push({ code: (await createLink(endpoints, { url })).body.code as string, url });
    }
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const allResolve = async () => {
    for (const l of links) {
      const res = await redirectOf(endpoints, l.code);
      expect({ code: l.code, status: res.status, location: res.headers.get('location') }).toEqual({ code: l.code, status: 302, location: l.url });
    }
  };

  it('plans, adds shard s4 (a new SQLite file) and removes it again while the process runs; every link resolves throughout', async () => {
    const plan = await reshard(['plan', '--add', 's4', '--json'], dataDir);
    expect(plan.code).toBe(0);
    const planned = JSON.parse(plan.out.slice(plan.out.indexOf('{'))) as { examined: number; moving: number; flows: Record<string, number> };
    expect(planned.examined).toBe(150);
    // About a fifth of the links move, each to s4 (sum of the flows; the odds of none at all are below 10^-14).
    expect(planned.moving).toBeGreaterThan(0);
    expect(Object.keys(planned.flows).filter((f) => !f.endsWith('->s4'))).toEqual([]);
    expect(Object.values(planned.flows).reduce((n, c) => n + c, 0)).toBe(planned.moving);
    expect(existsSync(join(dataDir, 'shards', 's4.sqlite'))).toBe(false); // a dry run creates nothing

    const added = await reshard(['run', '--add', 's4', '--yes', '--rate', '0'], dataDir);
    expect({ code: added.code, tail: added.code === 0 ? '' : added.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    expect(Number(/done: (\d+) rows copied/.exec(added.out)?.[1])).toBe(planned.moving); // nothing was created since the plan
    expect(existsSync(join(dataDir, 'shards', 's4.sqlite'))).toBe(true);
    await eventually(
      'the process on ring version 5',
      async () => metric(await metricsOf(endpoints.admin.redirect), 'shortlink_shard_ring_version') === 5,
      10_000,
      100,
    );
    await allResolve();

    const removed = await reshard(['run', '--remove', 's4', '--yes', '--rate', '0'], dataDir);
    expect(removed.code).toBe(0);
    await eventually(
      'the process on ring version 9',
      async () => metric(await metricsOf(endpoints.admin.generation), 'shortlink_shard_ring_version') === 9,
      10_000,
      100,
    );
    await allResolve();
    const status = await reshard(['status'], dataDir);
    expect(status.out).toMatch(/ring version 9: ring, 150 vnodes: s0 s1 s2 s3/);
    // The freeze compared the links written since verify began (none here), not every moving row.
    expect(status.out).toMatch(/freeze: writes of moving links held \d+ ms; 0 links written since verify began compared in \d+ ms \(0 rows read\)/);
  });

  it('jump hash, the same tool: a strategy change moves most links; then only the last shard may leave', async () => {
    const toJump = await reshard(['run', '--strategy', 'jump', '--yes', '--rate', '0', '--json'], dataDir);
    expect(toJump.code).toBe(0);
    await allResolve();
    const refused = await reshard(['plan', '--remove', 's1'], dataDir);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/jump hash can only remove its last shard \("s3"\), not "s1"/);
    const last = await reshard(['plan', '--remove', 's3', '--json'], dataDir);
    expect(last.code).toBe(0);
    const lastPlan = JSON.parse(last.out.slice(last.out.indexOf('{'))) as { moving: number; flows: Record<string, number> };
    expect(lastPlan.moving).toBeGreaterThan(0);
    expect(Object.keys(lastPlan.flows).filter((f) => !f.startsWith('s3->'))).toEqual([]);
    expect(Object.values(lastPlan.flows).reduce((n, c) => n + c, 0)).toBe(lastPlan.moving);
    expect((await reshard(['run', '--strategy', 'ring', '--yes', '--rate', '0'], dataDir)).code).toBe(0);
    await allResolve();
  });
});
