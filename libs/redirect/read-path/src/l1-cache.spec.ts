import { CachedLink } from '@shortlink/links-domain';
import { L1Cache, l1EntryBytes } from './l1-cache';

const plain = (i: number): CachedLink => ({
  id: `0193a5b2-7c1d-7e3f-8a9b-${String(i).padStart(12, '0')}`,
  tenantId: 'tenant-acme',
  targetUrl: `https://www.example.com/item-${i}`,
  redirectType: 302,
  expiresAt: null,
  status: 'active',
  version: 1,
  createdAt: 1764950000000,
});
const rich = (i: number): CachedLink => ({
  ...plain(i),
  title: `Winter sale item ${i}`,
  rules: {
    geoTargets: { DE: `https://de.example.com/${i}`, FR: `https://fr.example.com/${i}` },
    variants: [
      { url: `https://a.example.com/${i}`, weight: 50 },
      { url: `https://b.example.com/${i}`, weight: 50 },
    ],
  },
  social: { title: `Item ${i}`, description: 'A fine item for the winter, at a fine price.', image: `https://img.example.com/${i}.png` },
});

describe('L1Cache byte bound (docs/benchmarks.md, "L1 entry cost")', () => {
  it('counts a link by what it holds: rules and a card count, not only the target', () => {
    const key = 'short:link:sho.rt:abc1234';
    const [p, r] = [l1EntryBytes(key, { link: plain(1) }), l1EntryBytes(key, { link: rich(1) })];
    expect(p).toBeGreaterThanOrEqual(Math.ceil(1.6 * JSON.stringify(plain(1)).length));
    expect(r).toBeGreaterThan(2 * p);
    expect(l1EntryBytes(key, { missing: true })).toBeLessThan(p / 4);
  });

  it('keeps the bytes it counts under maxBytes: fewer links with rules fit than plain ones', () => {
    const maxBytes = 40 * l1EntryBytes('short:link:sho.rt:k000000', { link: plain(0) });
    const fill = (make: (i: number) => CachedLink) => {
      const l1 = new L1Cache({ maxEntries: 1000, maxBytes, ttlMs: 60_000, negativeTtlMs: 5000 });
      for (let i = 0; i < 200; i++) l1.setPositive(`short:link:sho.rt:k${String(i).padStart(6, '0')}`, make(i), false);
      return l1.size;
    };
    const [plainSize, richSize] = [fill(plain), fill(rich)];
    expect(plainSize.bytes).toBeLessThanOrEqual(maxBytes);
    expect(richSize.bytes).toBeLessThanOrEqual(maxBytes);
    expect(plainSize.entries).toBeGreaterThanOrEqual(39);
    expect(richSize.entries).toBeLessThan(plainSize.entries / 2);
    expect(richSize.entries).toBeGreaterThan(0);
  });
});
