import { BatchSlots, LocalSlots, SlotStore } from './concurrency-slots';

const PLANS = { free: { concurrentBatches: 2 }, paid: { concurrentBatches: 5 } };

describe('BatchSlots', () => {
  const setup = () => {
    const clock = { t: 1_000_000, now: () => clock.t };
    const shared = new LocalSlots(clock);
    let down = false;
    const flaky: SlotStore = {
      acquire: (...a) => (down ? Promise.reject(new Error('CLUSTERDOWN')) : shared.acquire(...a)),
      renew: (...a) => (down ? Promise.reject(new Error('CLUSTERDOWN')) : shared.renew(...a)),
      release: (...a) => (down ? Promise.reject(new Error('CLUSTERDOWN')) : shared.release(...a)),
    };
    const events: boolean[] = [];
    const slots = (store: SlotStore = flaky) => new BatchSlots(store, PLANS, { leaseMs: 10_000, onFallback: (d) => events.push(d) }, clock);
    return { clock, shared, slots, events, setDown: (d: boolean) => (down = d) };
  };

  it("admits a tenant's plan's batches at once and refuses the next with 429 BATCH_CONCURRENCY_LIMIT until one ends", async () => {
    const { slots } = setup();
    const instance = slots();
    const first = await instance.acquire('t1', 'free');
    await instance.acquire('t1', 'free');
    await expect(instance.acquire('t1', 'free')).rejects.toMatchObject({ code: 'BATCH_CONCURRENCY_LIMIT', details: { limit: 2, retryAfterSeconds: 10 } });
    await instance.acquire('t2', 'free'); // another tenant has its own
    first.release();
    first.release(); // once only: a second release frees nothing more
    await new Promise((r) => setImmediate(r));
    await instance.acquire('t1', 'free');
    await expect(instance.acquire('t1', 'free')).rejects.toMatchObject({ code: 'BATCH_CONCURRENCY_LIMIT' });
  });

  it('counts the batches of every instance in the shared store', async () => {
    const { slots } = setup();
    const [a, b] = [slots(), slots()];
    await a.acquire('t1', 'free');
    await b.acquire('t1', 'free');
    await expect(a.acquire('t1', 'free')).rejects.toMatchObject({ code: 'BATCH_CONCURRENCY_LIMIT' });
    await expect(b.acquire('t1', 'free')).rejects.toMatchObject({ code: 'BATCH_CONCURRENCY_LIMIT' });
  });

  it('frees the slot of an instance that stopped renewing once its lease lapses', async () => {
    const { slots, shared, clock } = setup();
    await shared.acquire('slots:batch:t1', 'dead-instance-1', 2, 10_000);
    await shared.acquire('slots:batch:t1', 'dead-instance-2', 2, 10_000);
    await expect(slots().acquire('t1', 'free')).rejects.toMatchObject({ code: 'BATCH_CONCURRENCY_LIMIT' });
    clock.t += 10_000;
    await expect(slots().acquire('t1', 'free')).resolves.toBeDefined();
  });

  it('counts on its own while the shared store fails, and says when it falls back and recovers', async () => {
    const { slots, setDown, events } = setup();
    const instance = slots();
    setDown(true);
    const held = [await instance.acquire('t1', 'free'), await instance.acquire('t1', 'free')];
    await expect(instance.acquire('t1', 'free')).rejects.toMatchObject({ code: 'BATCH_CONCURRENCY_LIMIT' });
    setDown(false);
    held.forEach((h) => h.release());
    await new Promise((r) => setImmediate(r));
    await instance.acquire('t1', 'free');
    expect(events).toEqual([true, false]);
  });
});
