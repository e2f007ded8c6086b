import { ConsistentHashRing } from '@shortlink/shard-router';
import { SegmentIdAllocator, SequenceCodeStrategy } from './codes';
import { Link, ShortUrlIdentifier } from './link';
import { LinkCache } from './link-cache';
import { LinkService } from './link-service';
import { CacheStore, DuplicateLinkError, IdBlock, LinkShardStore } from './ports';
import { ShardedLinkRepository } from './sharded-link-repository';

/** In-memory shard with the unique (domain, code) rule of the real stores. */
class MapShard implements LinkShardStore {
  rows = new Map<string, Link>();
  constructor(readonly shardName: string) {}
  async insert(link: Link) {
    const k = `${link.domain}/${link.code}`;
    if (this.rows.has(k)) throw new DuplicateLinkError(link);
    this.rows.set(k, link);
  }
  async insertMany(links: readonly Link[]) {
    for (const l of links) await this.insert(l);
  }
  async findByCode(id: ShortUrlIdentifier) {
    return this.rows.get(`${id.domain}/${id.code}`) ?? null;
  }
  async listIdentifiers() {
    return [];
  }
  async ping() {}
  async close() {}
}

const sequence = () => {
  let next = 1n;
  return { allocateBlock: async (_: string, size: number): Promise<IdBlock> => ({ start: next, end: (next += BigInt(size)) }) };
};

describe('LinkService', () => {
  const setup = () => {
    const shards = [new MapShard('a'), new MapShard('b')];
    const repo = new ShardedLinkRepository(new ConsistentHashRing(shards.map((s) => ({ name: s.shardName }))), shards);
    const deleted: string[] = [];
    const cache = new LinkCache({ del: async (k: readonly string[]) => void deleted.push(...k) } as unknown as CacheStore);
    const created: Link[] = [];
    const codes = new SequenceCodeStrategy('secret');
    const service = new LinkService(repo, new SegmentIdAllocator(sequence(), 'links', 10), codes, cache, { defaultDomain: 'sho.rt', shortDomains: ['sho.rt'] }, undefined, [async (l) => void created.push(l)]);
    return { service, repo, shards, deleted, created, codes };
  };

  it('stores a generated link on the shard the router names, clears a null entry and notifies listeners', async () => {
    const { service, repo, shards, deleted, created } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/x' });
    expect(link.code).toMatch(/^[0-9a-zA-Z]{7}$/);
    const owner = shards.find((s) => s.shardName === repo.shardNameFor(link.code))!;
    expect(owner.rows.get(`sho.rt/${link.code}`)).toEqual(link);
    expect(deleted).toEqual([`short:link:sho.rt:${link.code}`]);
    expect(created).toEqual([link]);
  });

  it('refuses a taken alias with ALIAS_TAKEN and keeps the first link', async () => {
    const { service } = setup();
    await service.create({ tenantId: 't1', url: 'https://example.com/1', alias: 'promo' });
    await expect(service.create({ tenantId: 't2', url: 'https://example.com/2', alias: 'promo' })).rejects.toMatchObject({ code: 'ALIAS_TAKEN' });
    expect((await service.get('t1', { domain: 'sho.rt', code: 'promo' })).targetUrl).toBe('https://example.com/1');
  });

  it('skips to the next id when an alias already holds the generated code', async () => {
    const { service, codes } = setup();
    // Ids 1 and 2 are used by the alias link itself and then the next create; pre-occupy id 2's code.
    await service.create({ tenantId: 't1', url: 'https://example.com/alias', alias: codes.codeFor(2n, '', 0) });
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/generated' });
    expect(link.code).toBe(codes.codeFor(3n, '', 0));
  });

  it('rejects bad URLs and aliases with stable codes', async () => {
    const { service } = setup();
    await expect(service.create({ tenantId: 't', url: 'ftp://example.com' })).rejects.toMatchObject({ code: 'INVALID_URL' });
    await expect(service.create({ tenantId: 't', url: 'https://sho.rt/abc' })).rejects.toMatchObject({ code: 'URL_NOT_ALLOWED' });
    await expect(service.create({ tenantId: 't', url: 'https://example.com/' + 'a'.repeat(2100) })).rejects.toMatchObject({ code: 'INVALID_URL' });
    // 2 028 CJK characters are 2 048 characters as typed, but 18 272 once percent-encoded.
    const cjk = 'https://example.com/' + '漢'.repeat(2028);
    expect(cjk.length).toBe(2048);
    await expect(service.create({ tenantId: 't', url: cjk })).rejects.toMatchObject({ code: 'INVALID_URL', details: { maxLength: 2048 } });
    const fits = await service.create({ tenantId: 't', url: 'https://example.com/' + '漢'.repeat(100) });
    expect(fits.targetUrl.length).toBeLessThanOrEqual(2048);
    await expect(service.create({ tenantId: 't', url: 'https://example.com', alias: 'a/b' })).rejects.toMatchObject({ code: 'INVALID_ALIAS' });
    await expect(service.create({ tenantId: 't', url: 'https://example.com', alias: 'health' })).rejects.toMatchObject({ code: 'INVALID_ALIAS' });
  });

  it('stores a 301 link with an expiry, and 302 without one by default', async () => {
    const { service, repo } = setup();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const permanent = await service.create({ tenantId: 't', url: 'https://example.com/p', redirectType: 301, expiresAt });
    expect(await repo.findByCode(permanent)).toMatchObject({ redirectType: 301, expiresAt: new Date(expiresAt) });
    const plain = await service.create({ tenantId: 't', url: 'https://example.com/q' });
    expect(await repo.findByCode(plain)).toMatchObject({ redirectType: 302, expiresAt: null });
    const offset = await service.create({ tenantId: 't', url: 'https://example.com/r', expiresAt: '9000-01-01T12:00:00+02:00' });
    expect(offset.expiresAt?.toISOString()).toBe('9000-01-01T10:00:00.000Z');
  });

  it('rejects a bad redirect type or expiry with VALIDATION_FAILED and stores nothing', async () => {
    const { service, shards } = setup();
    const bad: Array<Record<string, unknown>> = [
      { redirectType: 307 },
      { redirectType: '301' },
      { expiresAt: new Date(Date.now() - 1000).toISOString() },
      { expiresAt: '2030-01-01T00:00:00' }, // no zone: ambiguous
      { expiresAt: '2030-02-30T00:00:00Z' },
      { expiresAt: 1893456000000 },
      { expiresAt: '10000-01-01T00:00:00Z' },
    ];
    for (const extra of bad) {
      await expect(service.create({ tenantId: 't', url: 'https://example.com', ...extra })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: Object.keys(extra)[0] } });
    }
    expect(shards.reduce((n, s) => n + s.rows.size, 0)).toBe(0);
  });

  it("hides another tenant's link", async () => {
    const { service } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/mine' });
    await expect(service.get('t2', link)).rejects.toMatchObject({ code: 'LINK_NOT_FOUND' });
  });
});
