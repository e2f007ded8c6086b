import { App, byLabel, metric, metricsOf, startApp } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { API_KEY, SERVER_SECRETS, SHARED_META_JOBS_OFF } from './support';

/**
 * Admission control over HTTP on the real stack (docs/design.md, "Overload"): a generation instance whose
 * concurrency limit is held at 10 is flooded with API reads far beyond it. The reads beyond their share (7 of
 * the 10) are answered 503 `OVERLOADED` with Retry-After at once, every answer comes within the API bound of
 * the chaos run's overload invariant (5 s), and a low-rate probe of a higher class (creates: API writes) keeps
 * succeeding throughout.
 */
describe('overload: one generation instance flooded with reads', () => {
  const RUN = Date.now().toString(36);
  const DOMAIN = `overload-${RUN}.shortlink.test`;
  /** The API's bound under overload (tools/chaos/src/checker.ts, OVERLOAD.apiAnswerMs). */
  const API_BOUND_MS = 5_000;
  const FLOOD = 80;
  const FLOOD_MS = 6_000;
  let generation: App;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    generation = await startApp('generation', {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'memory',
      OLAP_DRIVER: 'chdb',
      LOG_LEVEL: 'error',
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      ...SERVER_SECRETS,
      ...SHARED_META_JOBS_OFF,
      SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
      SHORTLINK_PUBLIC_BASE_URL: `http://${DOMAIN}`,
      ADMISSION_LIMIT_INITIAL: '10',
      ADMISSION_LIMIT_MIN: '10',
      ADMISSION_LIMIT_MAX: '10',
    });
  }, 120_000);

  afterAll(() => generation?.stop());

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${generation.base}${path}`, {
      ...init,
      headers: { 'x-api-key': API_KEY, ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
      signal: AbortSignal.timeout(30_000),
    });

  it('sheds the flood early with 503 and Retry-After, within the bound, while creates keep succeeding', async () => {
    const created = await api('/api/v1/links', { method: 'POST', body: JSON.stringify({ url: `https://example.com/overload/${RUN}/seed` }) });
    expect(created.status).toBe(201);
    const { code } = (await created.json()) as { code: string };

    const flood: Array<{ status: number; ms: number; retryAfter: string | null; type: string | null; problem?: string }> = [];
    const probes: Array<{ status: number; ms: number }> = [];
    const until = Date.now() + FLOOD_MS;
    // The flood lasts FLOOD_MS and at least until the probe made its 6 creates: how many fit in 6 s depends on the
    // machine (under a CPU hog on both cores 4 did), the assertion below must not.
    let probed = false;
    const floodLoop = async () => {
      while (Date.now() < until || !probed) {
        const t = Date.now();
        const res = await api(`/api/v1/links/${code}`);
        const body = await res.text();
        flood.push({
          status: res.status,
          ms: Date.now() - t,
          retryAfter: res.headers.get('retry-after'),
          type: res.headers.get('content-type'),
          problem: res.status >= 400 ? (JSON.parse(body) as { code?: string }).code : undefined,
        });
      }
    };
    const probeLoop = async () => {
      for (let i = 0; Date.now() < until || probes.length < 6; i++) {
        const t = Date.now();
        const res = await api('/api/v1/links', { method: 'POST', body: JSON.stringify({ url: `https://example.com/overload/${RUN}/${i}` }) });
        await res.arrayBuffer();
        probes.push({ status: res.status, ms: Date.now() - t });
        await new Promise((r) => setTimeout(r, 200));
      }
      probed = true;
    };
    await Promise.all([...Array.from({ length: FLOOD }, floodLoop), probeLoop()]);

    const shed = flood.filter((r) => r.status === 503);
    const served = flood.filter((r) => r.status === 200);
    const slowest = (rs: Array<{ ms: number }>) => Math.max(0, ...rs.map((r) => r.ms));
    process.stdout.write(
      `\noverload flood: ${flood.length} reads (${served.length} served, ${shed.length} shed; slowest shed ${slowest(shed)} ms, slowest answer ${slowest(flood)} ms), ${probes.length} creates (${probes.filter((p) => p.status === 201).length} created, slowest ${slowest(probes)} ms)\n`,
    );
    // The flood went beyond the limit and was shed, each with its problem and Retry-After.
    expect(shed.length).toBeGreaterThan(0);
    expect(served.length).toBeGreaterThan(0);
    expect(flood.every((r) => r.status === 200 || r.status === 503)).toBe(true);
    for (const r of shed) expect(r).toMatchObject({ retryAfter: '1', type: 'application/problem+json', problem: 'OVERLOADED' });
    // Every answer within the bound; the shed ones early (nothing queued behind the limit).
    expect(slowest(flood)).toBeLessThan(API_BOUND_MS);
    expect(slowest(probes)).toBeLessThan(API_BOUND_MS);
    // The higher class kept its room: every create succeeded.
    expect(probes.length).toBeGreaterThan(5);
    expect(probes.every((p) => p.status === 201)).toBe(true);

    const m = await metricsOf(generation.admin);
    const shedByClass = byLabel(m, 'shortlink_requests_shed_total', 'class');
    expect(shedByClass.get('read')).toBe(shed.length);
    expect(shedByClass.get('write')).toBe(0);
    expect(metric(m, 'shortlink_admission_limit')).toBe(10);
  }, 60_000);
});
