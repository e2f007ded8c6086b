import { randomUUID } from 'crypto';
import { DuplicateLinkError, hashApiKey, Link, LinkShardStore, SequenceStore, TenantStore } from '@shortlink/links-domain';

export interface LinkStoreFixture {
  shard: LinkShardStore;
  meta: TenantStore & SequenceStore & { close(): Promise<void> };
  close(): Promise<void>;
}

let idCounter = BigInt(Date.now()) * 1000n;
const nextId = () => (idCounter++).toString();
const uniqueCode = () => 'c' + randomUUID().replace(/-/g, '').slice(0, 12);

export function aLink(overrides: Partial<Link> = {}): Link {
  return {
    id: nextId(),
    domain: 'sho.rt',
    code: uniqueCode(),
    targetUrl: 'https://example.com/landing?utm=1',
    tenantId: randomUUID(),
    createdAt: new Date(Math.floor(Date.now() / 1000) * 1000),
    expiresAt: null,
    status: 'active',
    redirectType: 302,
    ...overrides,
  };
}

/** One behaviour, every backend: run against SQLite in unit runs and MySQL in integration runs. */
export function describeLinkStoreContract(backend: string, open: () => Promise<LinkStoreFixture>) {
  describe(`link store contract: ${backend}`, () => {
    let f: LinkStoreFixture;
    beforeAll(async () => {
      f = await open();
    });
    afterAll(async () => {
      await f?.close();
    });

    it('stores a link and reads it back by domain and code with every field intact', async () => {
      const link = aLink({ expiresAt: new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000), redirectType: 301, targetUrl: 'https://example.com/ünïcode?q=a%20b' });
      await f.shard.insert(link);
      expect(await f.shard.findByCode({ domain: link.domain, code: link.code })).toEqual(link);
    });

    it('returns null for an unknown code and for the right code on another domain', async () => {
      const link = aLink();
      await f.shard.insert(link);
      expect(await f.shard.findByCode({ domain: link.domain, code: uniqueCode() })).toBeNull();
      expect(await f.shard.findByCode({ domain: 'other.example', code: link.code })).toBeNull();
    });

    it('treats codes as case-sensitive', async () => {
      const lower = aLink({ code: 'case' + uniqueCode().toLowerCase() });
      const upper = aLink({ code: lower.code.toUpperCase() });
      await f.shard.insert(lower);
      await f.shard.insert(upper);
      expect((await f.shard.findByCode(lower))?.id).toBe(lower.id);
      expect((await f.shard.findByCode(upper))?.id).toBe(upper.id);
    });

    it('rejects a second link with the same domain and code and keeps the first one', async () => {
      const first = aLink();
      await f.shard.insert(first);
      await expect(f.shard.insert(aLink({ code: first.code }))).rejects.toBeInstanceOf(DuplicateLinkError);
      expect(await f.shard.findByCode(first)).toEqual(first);
    });

    it('allows the same code on two domains', async () => {
      const a = aLink({ domain: 'a.example' });
      const b = aLink({ domain: 'b.example', code: a.code });
      await f.shard.insert(a);
      await f.shard.insert(b);
      expect((await f.shard.findByCode(b))?.id).toBe(b.id);
    });

    it('inserts a batch atomically: a duplicate inside rejects the whole batch', async () => {
      const batch = [aLink(), aLink(), aLink()];
      await f.shard.insertMany(batch);
      for (const l of batch) expect(await f.shard.findByCode(l)).toEqual(l);
      const existing = batch[0];
      const fresh = aLink();
      await expect(f.shard.insertMany([fresh, aLink({ code: existing.code })])).rejects.toBeInstanceOf(DuplicateLinkError);
      expect(await f.shard.findByCode(fresh)).toBeNull();
    });

    it('lists identifiers in id order, page by page', async () => {
      const links = [aLink(), aLink(), aLink()];
      await f.shard.insertMany(links);
      const page = await f.shard.listIdentifiers((BigInt(links[0].id) - 1n).toString(), 2);
      expect(page.map((p) => p.code)).toEqual([links[0].code, links[1].code]);
    });

    it('hands out disjoint id blocks to concurrent allocations', async () => {
      const sequence = 'contract-' + randomUUID().slice(0, 8);
      const blocks = await Promise.all(Array.from({ length: 20 }, () => f.meta.allocateBlock(sequence, 1000)));
      const starts = blocks.map((b) => b.start).sort((a, b) => (a < b ? -1 : 1));
      blocks.forEach((b) => expect(b.end - b.start).toBe(1000n));
      for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBe(1000n);
      expect(starts[0]).toBe(1n);
    });

    it('creates a tenant with a hashed key once and finds it by the hash', async () => {
      const tenant = { id: randomUUID(), name: 'acme', plan: 'free' as const, createdAt: new Date(Math.floor(Date.now() / 1000) * 1000) };
      const hash = hashApiKey('sl_' + randomUUID());
      const before = await f.meta.countTenants();
      expect(await f.meta.createWithApiKey(tenant, hash)).toBe(true);
      expect(await f.meta.createWithApiKey({ ...tenant, id: randomUUID() }, hash)).toBe(false);
      expect(await f.meta.findByApiKeyHash(hash)).toEqual(tenant);
      expect(await f.meta.findByApiKeyHash(hashApiKey('unknown'))).toBeNull();
      expect(await f.meta.countTenants()).toBe(before + 1);
    });
  });
}
