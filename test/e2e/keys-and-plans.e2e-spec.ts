import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, eventually, RunningProcess } from '@shortlink/harness';
import { batchOnItsOwnConnection, holdBatch, keyIdOf, quickBatch } from './keys-and-plans';
import { API_KEY, createLink, createTenant, restartEmbedded, startEmbedded } from './support';
import { api } from './tenant-journey';

const ALL_SCOPES = ['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write', 'admin'];

const waitPastKeyCache = () => new Promise((r) => setTimeout(r, 1200)); // each instance trusts a checked key for 1 s

/**
 * Keys, plans and the listing on the embedded profile, from outside: key privileges, plans that bind the tenant
 * (requests, keys, batches at once), and the listing's order and cursors. Small plan limits and
 * one-row batch chunks, so a running batch is seen by its first answer line.
 */
describe('embedded profile: keys, plans and the listing', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let env: Record<string, string>;
  let dataDir: string;
  const generation = () => endpoints.generation;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-keys-'));
    ({ proc, endpoints, env } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      PLAN_FREE_REQUESTS_PER_MINUTE: '30',
      PLAN_FREE_MAX_KEYS: '3',
      PLAN_FREE_CONCURRENT_BATCHES: '2',
      PLAN_FREE_INVITATIONS_PER_HOUR: '3',
      BATCH_CHUNK_ROWS: '1',
    }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("binds a free tenant's request limit across all its keys, and caps its keys with 403 KEY_LIMIT_REACHED", async () => {
    const { apiKey } = await createTenant(endpoints, 'free');
    const more: string[] = [];
    for (const name of ['second', 'third']) more.push((await api(generation(), 'POST', '/api/v1/keys', apiKey, { name })).body.apiKey as string);
    const fourth = await api(generation(), 'POST', '/api/v1/keys', apiKey, { name: 'fourth' });
    expect(fourth.status).toBe(403);
    expect(fourth.body).toMatchObject({ code: 'KEY_LIMIT_REACHED', limit: 3 });
    // Three requests counted so far; then 90 creates, 30 at a time over the three keys.
    const statuses: number[] = [];
    for (let wave = 0; wave < 3; wave++) {
      const creates = [apiKey, ...more].flatMap((key) =>
        Array.from({ length: 10 }, (_, i) => createLink(endpoints, { url: `https://example.com/many/${wave}/${i}` }, key)),
      );
      const answers = await Promise.all(creates);
      statuses.push(...answers.map((a) => a.status));
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(27);
    expect(statuses.filter((s) => s === 429)).toHaveLength(63);
  });

  it("runs at most the plan's batches of a tenant at once; the next gets 429 BATCH_CONCURRENCY_LIMIT until one ends", async () => {
    const { apiKey } = await createTenant(endpoints, 'free');
    const held = [await holdBatch(generation(), apiKey), await holdBatch(generation(), apiKey)];
    const refused = await quickBatch(generation(), apiKey);
    expect(refused).toMatchObject({ status: 429, code: 'BATCH_CONCURRENCY_LIMIT' });
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect((await quickBatch(generation(), (await createTenant(endpoints, 'free')).apiKey)).status).toBe(200); // another tenant is not held up
    expect(await held[0].finish()).toBe(200);
    const third = await holdBatch(generation(), apiKey); // the finished batch's slot is free again
    held[1].abort(); // a client that gives up frees its slot too
    await eventually("the dropped batch's slot", async () => (await quickBatch(generation(), apiKey)).status === 200, 5000, 250);
    expect(await third.finish()).toBe(200);
  });

  it('closes the connection of a batch refused with 429, whether its body has all arrived or is still coming', async () => {
    const { apiKey } = await createTenant(endpoints, 'free');
    const held = [await holdBatch(generation(), apiKey), await holdBatch(generation(), apiKey)];
    for (const body of ['whole', 'still sending'] as const) {
      const refused = await batchOnItsOwnConnection(generation(), apiKey, body);
      expect({ body, ...refused }).toMatchObject({ body, status: 429, code: 'BATCH_CONCURRENCY_LIMIT', connection: 'close', closedByServer: true });
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    }
    for (const batch of held) expect(await batch.finish()).toBe(200);
    // A batch that runs keeps its connection for the next request.
    expect(await batchOnItsOwnConnection(generation(), apiKey, 'whole', 1000)).toMatchObject({ status: 200, closedByServer: false });
  });

  it("caps a free tenant's invitations per hour, sent at once: 429 INVITATION_LIMIT_REACHED with Retry-After beyond, nothing stored", async () => {
    const { apiKey } = await createTenant(endpoints, 'free');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api(generation(), 'POST', '/api/v1/members', apiKey, { email: `outside-${i}@example.net`, role: 'viewer' })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.map((a) => [a.body.code, a.body.limit])).toEqual(Array(5).fill(['INVITATION_LIMIT_REACHED', 3]));
    for (const a of refused) expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(3000);
    expect((await api(generation(), 'GET', '/api/v1/members', apiKey)).body.members).toHaveLength(3);
    // Another tenant has an hour of its own.
    const other = await createTenant(endpoints, 'free');
    expect((await api(generation(), 'POST', '/api/v1/members', other.apiKey, { email: 'first@example.net', role: 'viewer' })).status).toBe(201);
  });

  it('lists newest first by creation time: links created one by one after a batch come before it, page by page', async () => {
    const { apiKey } = await createTenant(endpoints);
    const first = (await createLink(endpoints, { url: 'https://example.com/order/first' }, apiKey)).body.code as string;
    const batch = await fetch(`${generation()}/api/v1/links/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'x-api-key': apiKey },
      body: [1, 2, 3].map((i) => JSON.stringify({ url: `https://example.com/order/batch-${i}` })).join('\n'),
    });
    const batched = (await batch.text())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { link: { code: string } }).link.code);
    const last = (await createLink(endpoints, { url: 'https://example.com/order/last' }, apiKey)).body.code as string;
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page = await api(generation(), 'GET', `/api/v1/links?limit=2${cursor ? `&cursor=${cursor}` : ''}`, apiKey);
      expect(page.status).toBe(200);
      pages.push((page.body.links as Array<{ code: string }>).map((l) => l.code));
      cursor = page.body.nextCursor as string | null;
    } while (cursor);
    expect(pages).toEqual([[last, batched[2]], [batched[1], batched[0]], [first]]);
  });

  it('gives out sealed cursors: nothing in them to decode, refused with 400 INVALID_CURSOR for another tenant or once changed', async () => {
    const a = await createTenant(endpoints);
    const b = await createTenant(endpoints);
    for (let i = 0; i < 3; i++) await createLink(endpoints, { url: `https://example.com/cursor/${i}` }, a.apiKey);
    await createLink(endpoints, { url: 'https://example.com/cursor/b' }, b.apiKey);
    const cursor = (await api(generation(), 'GET', '/api/v1/links?limit=1', a.apiKey)).body.nextCursor as string;
    expect(() => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))).toThrow();
    expect((await api(generation(), 'GET', `/api/v1/links?limit=1&cursor=${cursor}`, a.apiKey)).body.links).toHaveLength(1);
    const flipped = Buffer.from(cursor, 'base64url');
    flipped[flipped.length - 20] ^= 1;
    const forged = Buffer.from(JSON.stringify({ b: '1000000', f: { q: '', tag: '', status: '', domain: '' } })).toString('base64url');
    for (const [key, c] of [
      [b.apiKey, cursor],
      [a.apiKey, flipped.toString('base64url')],
      [a.apiKey, forged],
    ]) {
      const refused = await api(generation(), 'GET', `/api/v1/links?limit=1&cursor=${c}`, key);
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('INVALID_CURSOR');
    }
  });

  it('lets a key revoke only keys whose scopes it holds, and restores the bootstrap key at the next start', async () => {
    const bootstrapId = await keyIdOf(generation(), API_KEY, 'bootstrap');
    const writer = (await api(generation(), 'POST', '/api/v1/keys', API_KEY, { name: 'writer', scopes: ['links:write', 'keys:write'] })).body.apiKey as string;
    const refused = await api(generation(), 'DELETE', `/api/v1/keys/${bootstrapId}`, writer);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      scopes: ['links:read', 'analytics:read', 'audit:read', 'members:write', 'conversions:write', 'admin'],
    });
    // A key holding every scope may revoke it; the operator's key is then refused ...
    const deputy = (await api(generation(), 'POST', '/api/v1/keys', API_KEY, { name: 'deputy', scopes: ALL_SCOPES })).body.apiKey as string;
    expect((await api(generation(), 'DELETE', `/api/v1/keys/${bootstrapId}`, deputy)).status).toBe(204);
    await waitPastKeyCache();
    expect((await api(generation(), 'GET', '/api/v1/admin/tenants?limit=1', API_KEY)).status).toBe(401);
    // ... until a start with the key in the environment restores it, with every scope.
    proc = await restartEmbedded(proc, endpoints, env);
    expect((await api(generation(), 'GET', '/api/v1/admin/tenants?limit=1', API_KEY)).status).toBe(200);
    const keys = (await api(generation(), 'GET', '/api/v1/keys', API_KEY)).body.keys as Array<{ id: string; scopes: string[]; revokedAt: string | null }>;
    expect(keys.find((k) => k.id === bootstrapId)).toMatchObject({ scopes: ALL_SCOPES, revokedAt: null });
  });
});
