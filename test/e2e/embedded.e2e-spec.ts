import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, eventually, RunningProcess } from '@shortlink/harness';
import { API_KEY, createLink, getStats, createTenant, redirectOf, restartEmbedded, startEmbedded } from './support';
import { describeAnalyticsJourney } from './analytics-journey';
import { describeAuditJourney } from './audit-journey';
import { describeSourcesJourney } from './sources-journey';
import { describeTenantJourney } from './tenant-journey';
import { describeLinkOptions } from './link-options';
import { describeProbeJourney } from './probe-journey';
import { describeUserJourney } from './user-journey';

/** The README's `npm start`: three apps in one process, SQLite + in-process cache/bus + chdb. */
describe('embedded profile (npm start)', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-'));
    // Loopback is the trusted proxy: the analytics journey sends visitors' addresses in X-Forwarded-For,
    // located on the city database.
    ({ proc, endpoints, env } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      GEO_DATABASE: 'city',
    }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeUserJourney(
    () => endpoints,
    async () => (await createTenant(endpoints)).apiKey,
  );
  describeAnalyticsJourney(
    () => endpoints,
    async () => (await createTenant(endpoints)).apiKey,
  );
  describeTenantJourney(
    () => endpoints,
    () => proc.output(),
  );
  describeLinkOptions(() => endpoints);
  describeProbeJourney(() => endpoints);
  describeAuditJourney(() => endpoints);
  describeSourcesJourney(() => endpoints);

  it('prints the three URLs and a ready-to-paste curl, but never the API key it was given', () => {
    expect(proc.output()).toContain(endpoints.generation);
    expect(proc.output()).toContain(endpoints.redirect);
    expect(proc.output()).toContain(endpoints.analytics);
    expect(proc.output()).toMatch(/curl -s -X POST .*\/api\/v1\/links/);
    expect(proc.output()).not.toContain(API_KEY);
  });

  it("prints the console's address, where the console answers", async () => {
    const printed = /^ {2}console +(\S+)$/m.exec(proc.output())?.[1];
    expect(printed).toBe(`http://localhost:${new URL(endpoints.generation).port}/console/`);
    const res = await fetch(printed!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
  });

  it('names each app in its own start-up lines, and prints its banner after them (issue 18)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-log-'));
    const started = await startEmbedded(dir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, LOG_LEVEL: 'info' });
    const lines = started.proc.output().split('\n');
    await started.proc.stop();
    rmSync(dir, { recursive: true, force: true });
    const logged = lines.flatMap((line, at) => (line.startsWith('{') ? [{ at, ...(JSON.parse(line) as { app: string; msg: string }) }] : []));
    const appOf = (msg: string) => logged.filter((l) => l.msg.startsWith(msg)).map((l) => l.app);
    expect(appOf('Mapped {/api/v1/links, POST} route')).toEqual(['generation']);
    expect(appOf('Mapped {/{code}, GET|HEAD|POST} in front of Fastify')).toEqual(['redirect']);
    expect(appOf('Mapped {/api/v1/links/:code/stats, GET} route')).toEqual(['analytics']);
    expect(appOf('Nest application successfully started')).toEqual(['generation', 'redirect', 'analytics']);
    const banner = lines.findIndex((line) => line.startsWith('shortlink is running'));
    expect(banner).toBeGreaterThan(Math.max(...logged.filter((l) => l.msg === 'Nest application successfully started').map((l) => l.at)));
  });

  it('counts every click made around a restart exactly once: before it, just before the stop, and after it', async () => {
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) codes.push((await createLink(endpoints, { url: `https://example.com/restart-clicks/${i}` })).body.code as string);
    const burst = async (perLink: number) => {
      for (const code of codes) for (let i = 0; i < perLink; i++) expect((await redirectOf(endpoints, code)).status).toBe(302);
    };
    const totals = async () => Promise.all(codes.map(async (code) => (await getStats(endpoints, code)).body.totals.clicks));
    await burst(20);
    await eventually('the first burst in stats', async () => (await totals()).every((n) => n === 20), 30_000, 250);
    await burst(10); // not yet aggregated when the stop begins: the shutdown drains it
    proc = await restartEmbedded(proc, endpoints, env);
    await burst(15);
    await eventually('all three bursts in stats', async () => (await totals()).every((n) => n === 45), 30_000, 250);
    await new Promise((r) => setTimeout(r, 1500)); // a late double count would show up now
    expect(await totals()).toEqual([45, 45, 45, 45, 45]);
  });

  it('keeps links across a restart on the same data directory', async () => {
    const created = await createLink(endpoints, { url: 'https://example.com/survives-restart' });
    expect(created.status).toBe(201);
    proc = await restartEmbedded(proc, endpoints, env);
    const res = await redirectOf(endpoints, created.body.code as string);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.com/survives-restart');
  });
});
