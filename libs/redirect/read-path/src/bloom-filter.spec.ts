import { x64, x86 } from 'murmurhash3js-revisited';
import { BloomFilter, bloomSize, estimateItems, generationBytes, generationRate, planGeneration } from './bloom-filter';
import { CacheKeys } from './cache-keys';
import { InMemoryCache } from './testing/in-memory-cache-store';

describe('bloomSize', () => {
  it('follows m = -n ln p / ln2^2 (3e9 links at 1 % need about 3.6 GB)', () => {
    const { bits, hashes } = bloomSize(3_000_000_000, 0.01);
    expect(bits / 8 / 1e9).toBeCloseTo(3.59, 1);
    expect(hashes).toBe(7);
    expect(bloomSize(100_000_000, 0.01).bits / 8 / 1e6).toBeCloseTo(119.8, 0);
  });
});

describe('generations', () => {
  it('give generation i the rate p / 2^(i+1), so that any number of them stays below the target together', () => {
    expect([0, 1, 2].map((i) => generationRate(0.01, i))).toEqual([0.005, 0.0025, 0.00125]);
    const sum = Array.from({ length: 40 }, (_, i) => generationRate(0.01, i)).reduce((a, b) => a + b, 0);
    expect(sum).toBeLessThan(0.01);
    expect(sum).toBeGreaterThan(0.0099);
  });

  it('are sized for their capacity and rate, split over the partitions, with the bytes they take', () => {
    const g = planGeneration('x', 1_000_000, generationRate(0.01, 0), 16, 'ready');
    expect(g.hashes).toBe(8);
    expect(g.bitsPerPartition * 16).toBeGreaterThanOrEqual(bloomSize(1_000_000, 0.005).bits);
    expect(generationBytes(g) / 1e6).toBeCloseTo(1.38, 1); // 11.0 bits a link
    expect(g).toMatchObject({ state: 'ready', open: true, partitions: 16 });
  });
});

describe('estimateItems', () => {
  it('tells the items from the share of bits set (n = -(m/k) ln(1 - X/m))', () => {
    const m = 1_000_000;
    const k = 7;
    for (const n of [1_000, 50_000, 100_000, 200_000]) {
      const expectedSet = m * (1 - Math.exp((-k * n) / m));
      expect(estimateItems(expectedSet, m, k) / n).toBeCloseTo(1, 5);
    }
    expect(estimateItems(m, m, k)).toBe(Infinity);
    expect(estimateItems(0, m, k)).toBe(0);
  });
});

describe('item placement', () => {
  it('is the one the filters in the store were written with (MurmurHash3 x64-128 and x86_32 as murmurhash3js-revisited computes them)', () => {
    const filter = new BloomFilter(new InMemoryCache(), { capacity: 1000, falsePositiveRate: 0.01, partitions: 16 });
    const g = planGeneration('g1', 1_000_000, 0.005, 16, 'ready');
    const bytes = (s: string) => new TextEncoder().encode(s);
    for (const item of ['sho.rt/abc', 'example.com/x', 'bü.ch/😀', 'a.b/' + 'z'.repeat(40)]) {
      // The placement as the filter computed it before its hash was rewritten: the library's hex, parsed.
      const hex = x64.hash128(bytes(item));
      let a = parseInt(hex.slice(0, 8), 16) % g.bitsPerPartition;
      let b = parseInt(hex.slice(8, 16), 16) % g.bitsPerPartition;
      const offsets: number[] = [];
      for (let i = 0; i < g.hashes; i++) {
        offsets.push(1 + a);
        a = (a + b) % g.bitsPerPartition;
        b = (b + i + 1) % g.bitsPerPartition;
      }
      const partition = (x86.hash32(bytes(item), 0x9747b28c) >>> 0) % g.partitions;
      expect(filter.locate(g, item)).toEqual({ key: CacheKeys.bloomPartition('g1', partition), offsets });
    }
  });
});
