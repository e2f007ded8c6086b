import { CachePolicy } from './cache-policy';
import { HotKeyDetector } from './hot-key-detector';
import { L1Cache } from './l1-cache';
import { GlobalRateLimiter } from './global-rate-limiter';
import { CacheStore } from './ports';

const link = {
  id: '1',
  tenantId: 't',
  targetUrl: 'https://example.com',
  redirectType: 302 as const,
  expiresAt: null,
  status: 'active' as const,
  version: 1,
  createdAt: 0,
};

describe('HotKeyDetector (60 s window, 10 s buckets, threshold 50, 5000 keys)', () => {
  it('counts, read by read, the reads of the buckets inside the window, across gaps longer than the window', () => {
    const d = new HotKeyDetector();
    const reads: number[] = [];
    let t = 1_000_000_000;
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 1200; i++) {
      t += next() < 0.01 ? 70_000 + next() * 50_000 : next() * 400;
      reads.push(t);
      const bucket = (ms: number) => Math.floor(ms / 10_000);
      const expected = reads.filter((r) => bucket(r) >= bucket(t) - 5).length;
      expect(d.record('k', t)).toBe(expected);
      expect(d.count('k', t)).toBe(expected);
    }
  });

  it('marks a key hot at 50 reads inside the window and forgets reads older than the window', () => {
    const d = new HotKeyDetector();
    const t0 = 1_000_000_000;
    for (let i = 0; i < 49; i++) d.record('k', t0 + i * 100);
    expect(d.isHot('k', t0 + 5000)).toBe(false);
    d.record('k', t0 + 5000);
    expect(d.isHot('k', t0 + 5000)).toBe(true);
    expect(d.hotKeys(t0 + 5000)).toEqual([{ key: 'k', reads: 50 }]);
    expect(d.isHot('k', t0 + 70_000)).toBe(false);
  });

  it('tracks at most maxTrackedKeys keys', () => {
    const d = new HotKeyDetector({ windowSeconds: 60, bucketSeconds: 10, threshold: 50, maxTrackedKeys: 100 });
    for (let i = 0; i < 1000; i++) d.record(`k${i}`);
    expect(d.tracked).toBe(100);
  });
});

describe('CachePolicy', () => {
  it('gives the maximum TTL less up to a tenth under lru, base+jitter under ttl (longer when hot), never beyond the maximum', () => {
    expect(new CachePolicy('lru', { random: () => 0 }).ttlMsFor(true)).toBe(3_600_000);
    expect(new CachePolicy('lru', { random: () => 0.999 }).ttlMsFor(false)).toBe(3_240_360);
    expect(new CachePolicy('ttl', { random: () => 0 }).ttlMsFor(false)).toBe(1_800_000);
    expect(new CachePolicy('ttl', { random: () => 0.999 }).ttlMsFor(false)).toBe(2_099_000);
    // The hot TTL (7200 s + jitter) is capped by the maximum, CACHE_MAX_TTL_SECONDS.
    expect(new CachePolicy('ttl', { random: () => 0 }).ttlMsFor(true)).toBe(3_600_000);
    expect(new CachePolicy('ttl', { random: () => 0, maxTtlMs: 10_000_000 }).ttlMsFor(true)).toBe(7_200_000);
    expect(new CachePolicy('ttl', { random: () => 0.999, maxTtlMs: 10_000_000 }).ttlMsFor(true)).toBe(7_799_000);
  });
});

describe('L1Cache', () => {
  it('keeps pinned hot keys while a scan of cold keys overflows the LRU', () => {
    const l1 = new L1Cache({ maxEntries: 10, maxBytes: 1 << 20, ttlMs: 60_000, negativeTtlMs: 1000 });
    l1.pin('hot', link);
    for (let i = 0; i < 100; i++) l1.setNegative(`scan${i}`);
    expect(l1.get('hot')).toEqual({ link });
    expect(l1.size.entries).toBe(10);
  });

  it('is bounded by bytes as well as entries', () => {
    const l1 = new L1Cache({ maxEntries: 1000, maxBytes: 2000, ttlMs: 60_000, negativeTtlMs: 1000 });
    for (let i = 0; i < 100; i++) l1.setPositive(`k${i}`, { ...link, targetUrl: 'https://example.com/' + 'x'.repeat(200) }, false);
    expect(l1.size.bytes).toBeLessThanOrEqual(2000);
    expect(l1.size.entries).toBeLessThan(10);
  });
});

describe('GlobalRateLimiter', () => {
  const counter = () => {
    const totals = new Map<string, number>();
    return { incrBy: async (k: string, d: number) => totals.set(k, (totals.get(k) ?? 0) + d).get(k)! } as unknown as CacheStore;
  };

  it('shares one limit between instances through the store', async () => {
    const store = counter();
    const a = new GlobalRateLimiter(store, 10, 100);
    const b = new GlobalRateLimiter(store, 10, 100);
    const now = 5_000_000;
    for (let i = 0; i < 6; i++) expect(a.allow(now).allowed).toBe(true);
    await a.sync();
    for (let i = 0; i < 4; i++) expect(b.allow(now).allowed).toBe(true);
    await b.sync();
    expect(b.allow(now).allowed).toBe(false);
    await a.sync();
    expect(a.allow(now).allowed).toBe(false);
    expect(a.allow(now + 1000).allowed).toBe(true);
  });

  it('falls back to a local limit when the store is unreachable', async () => {
    const broken = { incrBy: async () => Promise.reject(new Error('down')) } as unknown as CacheStore;
    const rl = new GlobalRateLimiter(broken, 1000, 2);
    await rl.sync();
    expect(rl.mode).toBe('local');
    const now = 9_000_000;
    expect([rl.allow(now), rl.allow(now), rl.allow(now)].map((d) => d.allowed)).toEqual([true, true, false]);
  });
});
