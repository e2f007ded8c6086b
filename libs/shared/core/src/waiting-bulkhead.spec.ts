import { BulkheadFullError, WaitingBulkhead } from './waiting-bulkhead';

/** A call that runs until the test ends it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, call: () => opened.then(() => 'done') };
}

describe('WaitingBulkhead', () => {
  it('runs up to the limit at once and starts the waiters in arrival order as permits free', async () => {
    const bulkhead = new WaitingBulkhead(2, 10, 5_000);
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    const results = gates.map((g, i) => bulkhead.execute(() => (started.push(i), g.call())));
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect([bulkhead.inFlight, bulkhead.queued]).toEqual([2, 2]);
    gates[1].open();
    await results[1];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    gates[0].open();
    gates[2].open();
    gates[3].open();
    await expect(Promise.all(results)).resolves.toEqual(['done', 'done', 'done', 'done']);
    expect([bulkhead.inFlight, bulkhead.queued]).toEqual([0, 0]);
  });

  it('refuses at once when the queue is full, and a waiter whose wait is over', async () => {
    const bulkhead = new WaitingBulkhead(1, 1, 30);
    const held = gate();
    const running = bulkhead.execute(held.call);
    const waiting = bulkhead.execute(async () => 'late');
    await expect(bulkhead.execute(async () => 'never')).rejects.toEqual(new BulkheadFullError('queue_full'));
    await expect(waiting).rejects.toMatchObject({ reason: 'wait_expired' });
    expect(bulkhead.queued).toBe(0);
    held.open();
    await running;
    expect(bulkhead.inFlight).toBe(0);
    await expect(bulkhead.execute(async () => 'again')).resolves.toBe('again');
  });

  it('holds the permit of a call that gave up on its work until that work ends (a query a timeout stopped waiting for)', async () => {
    const bulkhead = new WaitingBulkhead(1, 1, 10_000);
    const query = gate();
    const work = query.call();
    await expect(
      bulkhead.execute(
        () => Promise.reject(new Error('timed out')),
        () => work,
      ),
    ).rejects.toThrow('timed out');
    expect(bulkhead.inFlight).toBe(1);
    const next = bulkhead.execute(async () => 'next');
    await Promise.resolve();
    expect(bulkhead.queued).toBe(1);
    query.open();
    await expect(next).resolves.toBe('next');
    expect(bulkhead.inFlight).toBe(0);
  });

  it('frees the permit when a call fails', async () => {
    const bulkhead = new WaitingBulkhead(1, 0, 0);
    await expect(bulkhead.execute(() => Promise.reject(new Error('shard')))).rejects.toThrow('shard');
    await expect(bulkhead.execute(async () => 1)).resolves.toBe(1);
  });

  it('with no queue (queueMax 0) refuses beyond the limit at once, as a plain bulkhead', async () => {
    const bulkhead = new WaitingBulkhead(1, 0, 1_000);
    const held = gate();
    const running = bulkhead.execute(held.call);
    await expect(bulkhead.execute(async () => 1)).rejects.toMatchObject({ reason: 'queue_full' });
    held.open();
    await running;
  });
});
