import { randomUUID } from 'crypto';
import { SlotStore } from '@shortlink/tenants-domain';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One behaviour for the concurrency slots: in-process and Redis Cluster. */
export function describeSlotsContract(backend: string, open: () => Promise<{ store: SlotStore; close(): Promise<void> }>) {
  describe(`concurrency slots contract: ${backend}`, () => {
    let store: SlotStore;
    let close: () => Promise<void>;
    const key = () => `contract:${randomUUID()}`;
    beforeAll(async () => ({ store, close } = await open()));
    afterAll(() => close());

    it('gives up to the limit of holders a slot, again to a holder that has one, and room after a release', async () => {
      const k = key();
      expect(await store.acquire(k, 'a', 2, 60_000)).toBe(true);
      expect(await store.acquire(k, 'b', 2, 60_000)).toBe(true);
      expect(await store.acquire(k, 'c', 2, 60_000)).toBe(false);
      expect(await store.acquire(k, 'a', 2, 60_000)).toBe(true);
      expect(await store.acquire(key(), 'c', 2, 60_000)).toBe(true); // keys apart
      await store.release(k, 'a');
      await store.release(k, 'nobody');
      expect(await store.acquire(k, 'c', 2, 60_000)).toBe(true);
      expect(await store.acquire(k, 'd', 2, 60_000)).toBe(false);
    });

    it('gives exactly the limit to concurrent holders', async () => {
      const k = key();
      const taken = await Promise.all(Array.from({ length: 30 }, (_, i) => store.acquire(k, `h${i}`, 5, 60_000)));
      expect(taken.filter(Boolean)).toHaveLength(5);
    });

    it('lets a slot lapse after its lease unless renewed', async () => {
      const k = key();
      expect(await store.acquire(k, 'kept', 2, 300)).toBe(true);
      expect(await store.acquire(k, 'lapsing', 2, 300)).toBe(true);
      await sleep(150);
      await store.renew(k, 'kept', 300);
      await sleep(200);
      expect(await store.acquire(k, 'new', 2, 300)).toBe(true); // lapsing's lease is over
      expect(await store.acquire(k, 'another', 2, 300)).toBe(false); // kept's is not
    });
  });
}
