import { ZipfSampler } from './zipf';

/** A seeded generator (mulberry32), so the counts below are the same on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('ZipfSampler', () => {
  it('draws rank 0 about twice as often as rank 1 and ten times as often as rank 9 for s = 1', () => {
    const sampler = new ZipfSampler(1000, 1, seeded(7));
    const counts = new Array<number>(1000).fill(0);
    for (let i = 0; i < 200_000; i++) counts[sampler.next()]++;
    expect(counts[0] / counts[1]).toBeGreaterThan(1.8);
    expect(counts[0] / counts[1]).toBeLessThan(2.2);
    expect(counts[0] / counts[9]).toBeGreaterThan(8.5);
    expect(counts[0] / counts[9]).toBeLessThan(11.5);
    expect(counts[999]).toBeGreaterThan(0);
  });

  it('is flatter for a smaller s, and stays within the ranks', () => {
    const [steep, flat] = [1, 0.8].map((s) => {
      const sampler = new ZipfSampler(100_000, s, seeded(11));
      let top = 0;
      for (let i = 0; i < 50_000; i++) {
        const r = sampler.next();
        expect(r).toBeGreaterThanOrEqual(0);
        expect(r).toBeLessThan(100_000);
        if (r < 100) top++;
      }
      return top / 50_000;
    });
    expect(flat).toBeLessThan(steep * 0.8);
  });
});
