import { CacheStore } from './ports';
import { bloomSize, BloomFilter } from './bloom-filter';

/** Minimal bitmap store for the filter's own unit test (the real adapters have a contract suite). */
class Bitmaps implements Pick<CacheStore, 'setBits' | 'getBits' | 'del'> {
  maps = new Map<string, Set<number>>();
  async setBits(key: string, offsets: readonly number[]) {
    const s = this.maps.get(key) ?? new Set<number>();
    offsets.forEach((o) => s.add(o));
    this.maps.set(key, s);
  }
  async getBits(key: string, offsets: readonly number[]) {
    return offsets.map((o) => (this.maps.get(key)?.has(o) ? 1 : 0));
  }
  async del(keys: readonly string[]) {
    keys.forEach((k) => this.maps.delete(k));
  }
}

describe('bloomSize', () => {
  it('follows m = -n ln p / ln2^2 (3e9 links at 1 % need about 3.6 GB)', () => {
    const { bits, hashes } = bloomSize(3_000_000_000, 0.01);
    expect(bits / 8 / 1e9).toBeCloseTo(3.59, 1);
    expect(hashes).toBe(7);
    expect(bloomSize(100_000_000, 0.01).bits / 8 / 1e6).toBeCloseTo(119.8, 0);
  });
});

describe('BloomFilter', () => {
  const store = () => new Bitmaps() as unknown as CacheStore;

  it('answers unknown until built, then never "no" for an added item', async () => {
    const s = store();
    const bloom = new BloomFilter(s, { capacity: 10_000, falsePositiveRate: 0.01, partitions: 8 });
    await bloom.add('sho.rt/abc1234');
    expect(await bloom.check('sho.rt/abc1234')).toBe('unknown');
    await bloom.markBuilt();
    expect(await bloom.isBuilt()).toBe(true);
    const items = Array.from({ length: 5000 }, (_, i) => `sho.rt/code${i}`);
    await bloom.addMany(items);
    const answers = [];
    for (const item of items) answers.push(await bloom.check(item));
    expect(answers).toEqual(Array(items.length).fill('maybe'));
  });

  it('keeps the false-positive rate near the configured 1 % at capacity', async () => {
    const bloom = new BloomFilter(store(), { capacity: 20_000, falsePositiveRate: 0.01, partitions: 16 });
    await bloom.addMany(Array.from({ length: 20_000 }, (_, i) => `sho.rt/in${i}`));
    await bloom.markBuilt();
    let falsePositives = 0;
    const probes = 20_000;
    for (let i = 0; i < probes; i++) if ((await bloom.check(`sho.rt/out${i}`)) === 'maybe') falsePositives++;
    expect(falsePositives / probes).toBeLessThan(0.02);
    expect(falsePositives / probes).toBeGreaterThan(0.004);
  });

  it('answers unknown for a partition that was evicted or cleared', async () => {
    const bloom = new BloomFilter(store(), { capacity: 1000, falsePositiveRate: 0.01, partitions: 4 });
    await bloom.markBuilt();
    await bloom.clear();
    expect(await bloom.check('sho.rt/x')).toBe('unknown');
    expect(await bloom.isBuilt()).toBe(false);
  });
});
