import { randomUUID } from 'crypto';
import { CacheStore } from '@shortlink/links-domain';

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

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
