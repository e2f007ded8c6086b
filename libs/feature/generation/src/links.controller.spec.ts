import { loadConfig } from '@shortlink/config';
import { ConsistentHashRing } from '@shortlink/shard-router';
import { IdBlock, LinkCache, LinkService, SegmentIdAllocator, SequenceCodeStrategy, ShardedLinkRepository } from '@shortlink/links-domain';
import { SqliteLinkShardStore } from '@shortlink/link-store';
import { MemoryCacheStore } from '@shortlink/cache';
import type { AuthenticatedRequest } from '@shortlink/nest-platform';
import { LinksController } from './links.controller';

describe('LinksController', () => {
  afterAll(() => shard.close());
  const config = loadConfig({ SHORTLINK_PUBLIC_BASE_URL: 'https://sho.rt/' });
  // The embedded adapters: an in-memory SQLite shard and the in-process cache.
  const shard = new SqliteLinkShardStore('s0', ':memory:');
  let next = 1n;
  const service = new LinkService(
    new ShardedLinkRepository(new ConsistentHashRing([{ name: 's0' }]), [shard]),
    new SegmentIdAllocator({ allocateBlock: async (_: string, n: number): Promise<IdBlock> => ({ start: next, end: (next += BigInt(n)) }) }, 'links', 10),
    new SequenceCodeStrategy('x'.repeat(40)),
    new LinkCache(new MemoryCacheStore(1000)),
    { defaultDomain: config.links.defaultDomain, shortDomains: config.links.domains },
  );
  const controller = new LinksController(service, config);
  const as = (tenantId: string) => ({ principal: { tenantId } }) as AuthenticatedRequest;

  it('creates for the caller and shows the link with its short URL on the public base', async () => {
    const view = await controller.create(as('t1'), { url: 'https://example.com/a', redirectType: 301 });
    expect(view).toEqual({
      code: expect.stringMatching(/^[0-9A-Za-z]{7}$/), domain: 'sho.rt', shortUrl: `https://sho.rt/${view.code}`, url: 'https://example.com/a',
      createdAt: expect.any(String), expiresAt: null, status: 'active', redirectType: 301,
    });
    expect((await shard.findByCode({ domain: 'sho.rt', code: view.code }))?.tenantId).toBe('t1');
  });

  it('refuses a body that is not a JSON object with VALIDATION_FAILED', async () => {
    for (const body of [null, [], 'https://example.com', 42]) {
      await expect(controller.create(as('t1'), body)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    }
  });

  it("reads a link back for its owner only: another tenant's link is not found", async () => {
    const view = await controller.create(as('t1'), { url: 'https://example.com/mine' });
    expect((await controller.get(as('t1'), view.code)).url).toBe('https://example.com/mine');
    await expect(controller.get(as('t2'), view.code)).rejects.toMatchObject({ code: 'LINK_NOT_FOUND' });
  });
});
