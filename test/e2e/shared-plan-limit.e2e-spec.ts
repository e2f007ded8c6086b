import { requireEnv } from '@shortlink/testing';
import { App, startApp } from '@shortlink/harness';
import { API_KEY, SERVER_SECRETS } from './support';
import { api } from './tenant-journey';

/**
 * Issue 12 on the real stack: two generation instances share one key's plan window through Redis
 * Cluster, and neither instance writes a key to its logs (logged at debug level here).
 */
describe('plans across instances (real stack: two generation instances, Redis Cluster, MariaDB)', () => {
  const apps: App[] = [];

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    const env = {
      DB_DRIVER: 'mysql', CACHE_DRIVER: 'redis', BUS_DRIVER: 'kafka', OLAP_DRIVER: 'clickhouse', ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, LOG_LEVEL: 'debug', LOG_FORMAT: 'json', SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
    };
    apps.push(await startApp('generation', env));
    apps.push(await startApp('generation', env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
  });

  it('lets exactly 100 of 150 requests of one free key through, spread over both instances in a minute', async () => {
    const created = await api(apps[0].base, 'POST', '/api/v1/admin/tenants', API_KEY, { name: 'shared-window', plan: 'free' });
    expect(created.status).toBe(201);
    const key = created.body.apiKey as string;
    // Three waves of 50, each wave concurrent and alternating between the instances.
    const statuses: number[] = [];
    const perInstance = [0, 0];
    for (let wave = 0; wave < 3; wave++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const which = i % 2;
          const res = await api(apps[which].base, 'GET', '/api/v1/links?limit=1', key);
          if (res.status === 200) perInstance[which]++;
          return res;
        }),
      );
      statuses.push(...answers.map((a) => a.status));
      for (const a of answers) {
        expect(a.headers.get('ratelimit-limit')).toBe('100');
        if (a.status === 429) {
          expect(a.body.code).toBe('RATE_LIMITED');
          expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
        }
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    // Both instances served part of the 100: the count is shared, not per instance.
    expect(perInstance[0]).toBeGreaterThan(0);
    expect(perInstance[1]).toBeGreaterThan(0);
    // A paid key beside it is not affected.
    expect((await api(apps[1].base, 'GET', '/api/v1/links?limit=1', API_KEY)).headers.get('ratelimit-limit')).toBe('10000');

    const logs = apps.map((a) => a.proc.output()).join('\n');
    expect(logs).toContain('"path":"/api/v1/links"');
    expect(logs).not.toContain(key);
    expect(logs).not.toContain(API_KEY);
  }, 120_000);
});
