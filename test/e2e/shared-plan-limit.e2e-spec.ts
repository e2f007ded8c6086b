import { randomBytes } from 'crypto';
import { requireEnv } from '@shortlink/testing';
import { App, eventually, startApp } from '@shortlink/harness';
import { holdBatch, keyIdOf, quickBatch } from './keys-and-plans';
import { API_KEY, SERVER_SECRETS } from './support';
import { api } from './tenant-journey';

const ALL_SCOPES = ['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write', 'admin'];

/**
 * Plan limits on the real stack: two generation instances share one tenant's plan (requests
 * over all its keys, keys, batches at once) through Redis Cluster and MariaDB, page one listing
 * between them, and neither instance writes a key to its logs (logged at debug level here).
 */
describe('plans across instances (real stack: two generation instances, Redis Cluster, MariaDB)', () => {
  const apps: App[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'json',
      SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
      // A batch answers its first row once the second is read: a running batch is seen by its first line.
      BATCH_CHUNK_ROWS: '1',
      PLAN_FREE_INVITATIONS_PER_HOUR: '3',
    };
    apps.push(await startApp('generation', env));
    apps.push(await startApp('generation', env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
  });

  const newTenant = async (plan: 'free' | 'paid') => {
    const created = await api(apps[0].base, 'POST', '/api/v1/admin/tenants', API_KEY, { name: `shared-${plan}`, plan });
    expect(created.status).toBe(201);
    return { tenantId: created.body.tenant.id as string, apiKey: created.body.apiKey as string };
  };

  it('lets exactly the free plan’s 100 requests of a tenant through, over two keys and both instances, in a minute', async () => {
    const { apiKey } = await newTenant('free');
    const second = (await api(apps[1].base, 'POST', '/api/v1/keys', apiKey, { name: 'second' })).body.apiKey as string; // the tenant's first request
    // Three waves of 50, each wave concurrent and alternating between the instances and the keys.
    const statuses: number[] = [];
    const perInstance = [0, 0];
    for (let wave = 0; wave < 3; wave++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const which = i % 2;
          const res = await api(apps[which].base, 'GET', '/api/v1/links?limit=1', Math.floor(i / 2) % 2 ? second : apiKey);
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
    expect(statuses.filter((s) => s === 200)).toHaveLength(99);
    expect(statuses.filter((s) => s === 429)).toHaveLength(51);
    // Both instances served part of them: the count is shared, not per instance.
    expect(perInstance[0]).toBeGreaterThan(0);
    expect(perInstance[1]).toBeGreaterThan(0);
    // A paid key beside it is not affected.
    expect((await api(apps[1].base, 'GET', '/api/v1/links?limit=1', API_KEY)).headers.get('ratelimit-limit')).toBe('10000');

    const logs = apps.map((a) => a.proc.output()).join('\n');
    expect(logs).toContain('"path":"/api/v1/links"');
    for (const key of [apiKey, second, API_KEY]) expect(logs).not.toContain(key);
  }, 120_000);

  it('caps a free tenant’s keys at 5 when both instances create them at once (403 KEY_LIMIT_REACHED)', async () => {
    const { apiKey } = await newTenant('free');
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => api(apps[i % 2].base, 'POST', '/api/v1/keys', apiKey, { name: `k${i}` })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(4); // the first key is the fifth
    expect(answers.filter((a) => a.status === 403).map((a) => a.body.code)).toEqual(Array(4).fill('KEY_LIMIT_REACHED'));
    const listed = (await api(apps[0].base, 'GET', '/api/v1/keys', apiKey)).body.keys as unknown[];
    expect(listed).toHaveLength(5);
  });

  it('runs at most 2 batches of a free tenant at once over both instances; the next is 429 BATCH_CONCURRENCY_LIMIT', async () => {
    const { apiKey } = await newTenant('free');
    const held = [await holdBatch(apps[0].base, apiKey), await holdBatch(apps[0].base, apiKey)];
    const refused = await quickBatch(apps[1].base, apiKey);
    expect(refused).toMatchObject({ status: 429, code: 'BATCH_CONCURRENCY_LIMIT' });
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(await held[0].finish()).toBe(200);
    await eventually('a free batch slot on the other instance', async () => (await quickBatch(apps[1].base, apiKey)).status === 200, 5000, 250);
    expect(await held[1].finish()).toBe(200);
  });

  it("caps a free tenant's invitations per hour over both instances: 3 of 8 sent at once, the rest 429 INVITATION_LIMIT_REACHED", async () => {
    const { apiKey } = await newTenant('free');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api(apps[i % 2].base, 'POST', '/api/v1/members', apiKey, { email: `outside-${i}@example.net`, role: 'viewer' })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.map((a) => a.body.code)).toEqual(Array(5).fill('INVITATION_LIMIT_REACHED'));
    for (const a of refused) expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(3000);
    expect((await api(apps[1].base, 'GET', '/api/v1/members', apiKey)).body.members).toHaveLength(3);
  });

  it('lists newest first on the MariaDB shards, one page from each instance, with cursors only the tenant can use', async () => {
    const { apiKey } = await newTenant('paid');
    const create = async (app: App, url: string) => (await api(app.base, 'POST', '/api/v1/links', apiKey, { url })).body.code as string;
    const first = await create(apps[0], 'https://example.com/order/first');
    const batch = await fetch(`${apps[1].base}/api/v1/links/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'x-api-key': apiKey },
      body: [1, 2, 3].map((i) => JSON.stringify({ url: `https://example.com/order/batch-${i}` })).join('\n'),
    });
    const batched = (await batch.text())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { link: { code: string } }).link.code);
    const last = await create(apps[0], 'https://example.com/order/last');
    const pages: string[][] = [];
    let cursor: string | null = null;
    for (let i = 0; cursor !== null || i === 0; i++) {
      const page = await api(apps[i % 2].base, 'GET', `/api/v1/links?limit=2${cursor ? `&cursor=${cursor}` : ''}`, apiKey);
      expect(page.status).toBe(200);
      pages.push((page.body.links as Array<{ code: string }>).map((l) => l.code));
      cursor = page.body.nextCursor as string | null;
      if (i === 0) {
        const foreign = await api(apps[1].base, 'GET', `/api/v1/links?limit=2&cursor=${cursor}`, API_KEY);
        expect(foreign.status).toBe(400);
        expect(foreign.body.code).toBe('INVALID_CURSOR');
      }
    }
    expect(pages).toEqual([[last, batched[2]], [batched[1], batched[0]], [first]]);
  });

  it('restores a revoked bootstrap key when an instance starts with it; a links:write and keys:write key could not revoke it', async () => {
    const bootKey = `sl_e2e_boot_${randomBytes(12).toString('hex')}`; // its own operator tenant: the shared API_KEY stays untouched
    let app = await startApp('generation', { ...env, SHORTLINK_BOOTSTRAP_API_KEY: bootKey });
    try {
      const bootId = await keyIdOf(app.base, bootKey, 'bootstrap');
      const writer = (await api(app.base, 'POST', '/api/v1/keys', bootKey, { name: 'writer', scopes: ['links:write', 'keys:write'] })).body.apiKey as string;
      expect((await api(apps[0].base, 'DELETE', `/api/v1/keys/${bootId}`, writer)).body.code).toBe('INSUFFICIENT_SCOPE');
      const deputy = (await api(app.base, 'POST', '/api/v1/keys', bootKey, { name: 'deputy', scopes: ALL_SCOPES })).body.apiKey as string;
      expect((await api(apps[0].base, 'DELETE', `/api/v1/keys/${bootId}`, deputy)).status).toBe(204);
      await eventually('the revoked key refused', async () => (await api(app.base, 'GET', '/api/v1/keys', bootKey)).status === 401, 5000, 250);
      await app.stop();
      app = await startApp('generation', { ...env, SHORTLINK_BOOTSTRAP_API_KEY: bootKey });
      expect((await api(app.base, 'GET', '/api/v1/admin/tenants?limit=1', bootKey)).status).toBe(200);
      expect((await api(apps[1].base, 'GET', '/api/v1/keys', bootKey)).body.keys).toContainEqual(expect.objectContaining({ id: bootId, revokedAt: null }));
    } finally {
      await app.stop();
    }
  }, 120_000);
});
