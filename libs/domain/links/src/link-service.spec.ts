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
    await expect(service.create({ tenantId: 't', url: 'https://example.com', alias: 'a/b' })).rejects.toMatchObject({ code: 'INVALID_ALIAS' });
    await expect(service.create({ tenantId: 't', url: 'https://example.com', alias: 'health' })).rejects.toMatchObject({ code: 'INVALID_ALIAS' });
  });

  it("hides another tenant's link", async () => {
    const { service } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/mine' });
    await expect(service.get('t2', link)).rejects.toMatchObject({ code: 'LINK_NOT_FOUND' });
  });
});
