import { randomUUID } from 'crypto';
import { CacheStore } from '@shortlink/read-path';

const until = async (check: () => Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
};

export function describeCacheStoreContract(backend: string, open: () => Promise<CacheStore>) {
  describe(`cache store contract: ${backend}`, () => {
    let store: CacheStore;
    const key = (name: string) => `short:link:contract.test:${name}-${randomUUID()}`;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('returns null for a key never set, and the value of a key set without TTL', async () => {
      const k = key('plain');
      expect(await store.get(k)).toBeNull();
      await store.set(k, '{"targetUrl":"https://example.com"}');
      expect(await store.get(k)).toBe('{"targetUrl":"https://example.com"}');
    });

    it('setIfNewer writes over missing keys, null sentinels, unversioned and older values, never over a newer or equal version', async () => {
      const k = key('versioned');
      expect(await store.setIfNewer(k, '{"version":2,"t":"b"}', 2)).toBe(true);
      expect(await store.setIfNewer(k, '{"version":1,"t":"a"}', 1)).toBe(false);
      expect(await store.setIfNewer(k, '{"version":2,"t":"c"}', 2)).toBe(false);
      expect(await store.get(k)).toBe('{"version":2,"t":"b"}');
      expect(await store.setIfNewer(k, '{"version":3,"t":"d"}', 3, 60_000)).toBe(true);
      expect(await store.get(k)).toBe('{"version":3,"t":"d"}');
      expect(await store.pttl(k)).toBeGreaterThan(50_000);
      const sentinel = key('sentinel-then-value');
      await store.set(sentinel, '', 60_000);
      expect(await store.setIfNewer(sentinel, '{"version":1}', 1)).toBe(true);
      const legacy = key('unversioned');
      await store.set(legacy, '{"targetUrl":"https://example.com"}');
      expect(await store.setIfNewer(legacy, '{"version":1}', 1)).toBe(true);
    });

    it('incrementBelow counts exactly up to the limit under concurrency, starting from the initial count', async () => {
      const k = key('bounded');
      const results = await Promise.all(Array.from({ length: 60 }, () => store.incrementBelow(k, 40, 5)));
      const granted = results.filter((r): r is number => r !== null).sort((a, b) => a - b);
      expect(granted).toEqual(Array.from({ length: 35 }, (_, i) => i + 6));
      expect(results.filter((r) => r === null)).toHaveLength(25);
      expect(await store.incrementBelow(k, 40, 0)).toBeNull();
      expect(await store.incrementBelow(k, 41, 0)).toBe(41);
    });

    it('keeps an empty string (the null-value sentinel) distinct from a missing key', async () => {
      const k = key('sentinel');
      await store.set(k, '', 60_000);
      expect(await store.get(k)).toBe('');
    });

    it('expires a key set with a TTL', async () => {
      const k = key('ttl');
      await store.set(k, 'v', 150);
      expect(await store.get(k)).toBe('v');
      expect(await until(async () => (await store.get(k)) === null, 3000)).toBe(true);
    });

    it('overwrites a value and deletes keys spread over many slots', async () => {
      const keys = Array.from({ length: 20 }, (_, i) => key(`del${i}`));
      for (const k of keys) await store.set(k, 'a');
      await store.set(keys[0], 'b');
      expect(await store.get(keys[0])).toBe('b');
      await store.del(keys);
      expect(await Promise.all(keys.map((k) => store.get(k)))).toEqual(keys.map(() => null));
    });

    it('dropNullsAndSetBits deletes the null sentinels of keys spread over many slots, no other value, and sets the bits of several bitmaps, in one call', async () => {
      const keys = Array.from({ length: 50 }, (_, i) => key(`many${i}`));
      for (const k of keys) await store.set(k, '', 60_000);
      const valued = [key('value'), key('tombstone')];
      await store.set(valued[0], '{"version":3}');
      await store.set(valued[1], '{"gone":true,"version":4}');
      const kept = key('kept');
      await store.set(kept, 'v');
      const bitmaps = Array.from({ length: 6 }, (_, i) => ({ key: key(`bitmap${i}`), offsets: [i, 100 + i, 70_000 + i] }));
      await store.setBits(bitmaps[0].key, [5]);
      await store.dropNullsAndSetBits([...keys, ...valued], [...bitmaps, { key: key('no-offsets'), offsets: [] }]);
      expect(await Promise.all(keys.map((k) => store.get(k)))).toEqual(keys.map(() => null));
      expect(await Promise.all(valued.map((k) => store.get(k)))).toEqual(['{"version":3}', '{"gone":true,"version":4}']);
      expect(await store.get(kept)).toBe('v');
      expect(await store.getBits(bitmaps[0].key, [0, 1, 5, 100, 101, 70_000])).toEqual([1, 0, 1, 1, 0, 1]);
      for (const [i, b] of bitmaps.entries()) expect(await store.getBits(b.key, [i, 100 + i, 70_000 + i, 1 + i])).toEqual([1, 1, 1, 0]);
      await store.dropNullsAndSetBits([], []);
      await store.dropNullsAndSetBits([kept], []);
      expect(await store.get(kept)).toBe('v');
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}

export function describeCacheStoreAtomicsContract(backend: string, open: () => Promise<CacheStore>) {
  describe(`cache store atomics contract: ${backend}`, () => {
    let store: CacheStore;
    const key = (name: string) => `short:contract:${name}:${randomUUID()}`;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('reports PTTL -2 for a missing key, -1 without TTL and the remaining ms with one', async () => {
      const k = key('pttl');
      expect(await store.pttl(k)).toBe(-2);
      await store.set(k, 'v');
      expect(await store.pttl(k)).toBe(-1);
      await store.set(k, 'v', 60_000);
      const ttl = await store.pttl(k);
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    });

    it('lets exactly one of many concurrent callers acquire a lock, and only the owner release it', async () => {
      const k = key('lock');
      const results = await Promise.all(Array.from({ length: 25 }, (_, i) => store.setIfAbsent(k, `token-${i}`, 5_000)));
      expect(results.filter(Boolean)).toHaveLength(1);
      const owner = `token-${results.indexOf(true)}`;
      expect(await store.deleteIfEquals(k, 'someone-else')).toBe(false);
      expect(await store.get(k)).toBe(owner);
      expect(await store.deleteIfEquals(k, owner)).toBe(true);
      expect(await store.setIfAbsent(k, 'next', 5_000)).toBe(true);
    });

    it('lets a lock expire by itself', async () => {
      const k = key('lock-ttl');
      expect(await store.setIfAbsent(k, 'a', 100)).toBe(true);
      expect(await until(async () => store.setIfAbsent(k, 'b', 5_000), 3_000)).toBe(true);
    });

    it('counts with INCRBY and sets the expiry once, when the counter is created', async () => {
      const k = key('counter');
      expect(await store.incrBy(k, 5, 60_000)).toBe(5);
      expect(await store.incrBy(k, 3, 60_000)).toBe(8);
      const totals = await Promise.all(Array.from({ length: 10 }, () => store.incrBy(k, 1, 60_000)));
      expect(Math.max(...totals)).toBe(18);
      expect(await store.pttl(k)).toBeGreaterThan(0);
    });

    it('sets and reads bitmap offsets, missing keys and unset bits read as 0', async () => {
      const k = key('bits');
      expect(await store.getBits(k, [0, 7, 1_000_000])).toEqual([0, 0, 0]);
      await store.setBits(k, [0, 9, 123_456]);
      expect(await store.getBits(k, [0, 1, 9, 123_456, 123_457])).toEqual([1, 0, 1, 1, 0]);
    });

    it('counts the bits set in a byte range of a bitmap (BITCOUNT, ends included), 0 for a missing key', async () => {
      const k = key('bitcount');
      expect(await store.countBits(k, 0, 100)).toBe(0);
      await store.setBits(k, [0, 7, 8, 9, 800, 8000]);
      expect(await store.countBits(k, 0, 0)).toBe(2);
      expect(await store.countBits(k, 1, 1)).toBe(2);
      expect(await store.countBits(k, 0, 99)).toBe(4);
      expect(await store.countBits(k, 0, 100)).toBe(5);
      expect(await store.countBits(k, 101, 5000)).toBe(1);
      expect(await store.countBits(k, 0, 1 << 20)).toBe(6);
    });
  });
}
