import { DomainError, RequestDeadline } from '@shortlink/core';
import { ShardGuard } from './shard-guard';

/** Fake timers throughout: cockatiel's timeouts and the deadline's clock move only when the test moves them. */
describe('ShardGuard and the request deadline', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  const guard = () =>
    new ShardGuard('s0', {
      timeoutMs: 3000,
      bulkTimeoutMs: 30_000,
      failures: 1,
      openMs: 1000,
      redirectLookups: 4,
      redirectLookupQueue: { max: 10, waitMs: 1000 },
    });
  const hang = () => new Promise<never>(() => undefined);
  const inRequest = <T>(budgetMs: number, fn: () => Promise<T>) => RequestDeadline.run(Date.now() + budgetMs, () => false, fn);

  it("gives a call what is left of its request's deadline, not its own timeout, and does not count that against the shard", async () => {
    const g = guard();
    for (const call of ['single', 'redirect'] as const) {
      const pending = inRequest(200, () => g.run(hang, call));
      const caught = pending.catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(200);
      const error = (await caught) as DomainError;
      expect(error).toBeInstanceOf(DomainError);
      expect(error.code).toBe('SHARD_UNAVAILABLE');
      expect(error.details).toMatchObject({ shard: 's0', deadline: true, retryAfterSeconds: 1 });
    }
    // One failure would open this breaker: the deadlines did not count.
    expect(g.available).toBe(true);
    await expect(g.run(async () => 'ok')).resolves.toBe('ok');
  });

  it('refuses at once when nothing is left, without asking the shard', async () => {
    const g = guard();
    const op = jest.fn(async () => 'asked');
    jest.setSystemTime(Date.now());
    const result = inRequest(0, () => g.run(op)).catch((e: DomainError) => e.details);
    expect(await result).toMatchObject({ deadline: true });
    expect(op).not.toHaveBeenCalled();
  });

  it('keeps its own timeout (and the breaker counts it) when the deadline is further away, and a batch chunk keeps its own', async () => {
    const g = guard();
    const bulk = inRequest(100, () => g.run(async () => 'chunk', 'bulk'));
    await expect(bulk).resolves.toBe('chunk');
    const caught = inRequest(10_000, () => g.run(hang)).catch((e: DomainError) => e);
    await jest.advanceTimersByTimeAsync(3000);
    const error = await caught;
    expect(error.details).not.toHaveProperty('deadline');
    expect(g.available).toBe(false);
  });

  it("keeps a redirect look-up's permit while its query still runs after the timeout gave up on it: no more queries on the shard than its look-ups", async () => {
    const g = new ShardGuard('s0', {
      timeoutMs: 3000,
      bulkTimeoutMs: 30_000,
      failures: 100,
      openMs: 1000,
      redirectLookups: 1,
      redirectLookupQueue: { max: 10, waitMs: 60_000 },
    });
    let inDb = 0;
    let maxInDb = 0;
    const parked: Array<() => void> = [];
    const query = () =>
      new Promise<string>((resolve) => {
        maxInDb = Math.max(maxInDb, ++inDb);
        parked.push(() => (inDb--, resolve('row')));
      });
    const first = g.run(query, 'redirect').catch((e: DomainError) => e.code);
    const second = g.run(query, 'redirect').catch((e: DomainError) => e.code);
    await jest.advanceTimersByTimeAsync(3000);
    expect(await first).toBe('SHARD_UNAVAILABLE'); // the caller is answered at its timeout
    await jest.advanceTimersByTimeAsync(1000);
    expect(maxInDb).toBe(1); // the second waits: the first query is still in the database
    parked.shift()!();
    await jest.advanceTimersByTimeAsync(0);
    expect(maxInDb).toBe(1);
    parked.shift()!();
    await expect(second).resolves.toBe('row');
  });
});
