import { AdaptiveConcurrencyLimit, Permit } from './adaptive-limit';
import { RequestDeadline } from './request-deadline';

/** A clock the test moves by hand: no real time passes anywhere in this spec. */
const fakeClock = () => {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
};

describe('AdaptiveConcurrencyLimit', () => {
  it('admits up to the limit and sheds the rest at once, counting them by class', () => {
    const clock = fakeClock();
    const l = new AdaptiveConcurrencyLimit({ initial: 10, min: 2, max: 100, latencyTargetMs: 100, clock });
    const permits = Array.from({ length: 10 }, () => l.tryAcquire('redirect'));
    expect(permits.every((p) => p !== null)).toBe(true);
    expect(l.tryAcquire('redirect')).toBeNull();
    expect(l.shed.redirect).toBe(1);
    permits[0]!.done();
    expect(l.tryAcquire('redirect')).not.toBeNull();
  });

  it('keeps room for the higher classes: a flood of analytics reads takes half the limit, writes 90 %, redirects all of it', () => {
    const clock = fakeClock();
    const l = new AdaptiveConcurrencyLimit({ initial: 20, min: 2, max: 100, latencyTargetMs: 100, clock });
    let analytics = 0;
    while (l.tryAcquire('analytics')) analytics++;
    expect(analytics).toBe(10);
    let reads = 0;
    while (l.tryAcquire('read')) reads++;
    expect(reads).toBe(4); // 70 % of 20, less the 10 in flight
    let writes = 0;
    while (l.tryAcquire('write')) writes++;
    expect(writes).toBe(4); // up to 18
    let redirects = 0;
    while (l.tryAcquire('redirect')) redirects++;
    expect(redirects).toBe(2); // the last 10 %
    expect(l.shed).toEqual({ redirect: 1, write: 1, read: 1, analytics: 1 });
  });

  it('lowers the limit when answers are slower than the target, once per target length, never below min', () => {
    const clock = fakeClock();
    const l = new AdaptiveConcurrencyLimit({ initial: 100, min: 50, max: 200, latencyTargetMs: 100, backoff: 0.5, clock });
    const slow = Array.from({ length: 5 }, () => l.tryAcquire('write')!);
    clock.advance(150);
    for (const p of slow) p.done();
    expect(l.limit).toBe(50); // five slow answers at once: one decrease
    const again = l.tryAcquire('write')!;
    clock.advance(150);
    again.done();
    expect(l.limit).toBe(50); // the floor
  });

  it('counts a dropped request as congestion however fast it was', () => {
    const clock = fakeClock();
    const l = new AdaptiveConcurrencyLimit({ initial: 40, min: 1, max: 100, latencyTargetMs: 100, clock });
    l.tryAcquire('read')!.done(true);
    expect(l.limit).toBe(36);
  });

  it('raises the limit by one per limit of fast answers while at least half of it is in use, up to max', () => {
    const clock = fakeClock();
    const l = new AdaptiveConcurrencyLimit({ initial: 10, min: 1, max: 12, latencyTargetMs: 100, clock });
    // Idle: fast answers with little in flight do not raise it (no evidence the app could take more).
    for (let i = 0; i < 50; i++) l.tryAcquire('redirect')!.done();
    expect(l.limit).toBe(10);
    for (let round = 0; round < 40; round++) {
      const held: Permit[] = [];
      for (let i = 0; i < l.limit; i++) held.push(l.tryAcquire('redirect')!);
      clock.advance(5);
      for (const p of held) p.done();
    }
    expect(l.limit).toBe(12);
  });

  it('comes back to its initial value in calm traffic after a burst lowered it, and no further', () => {
    const clock = fakeClock();
    const l = new AdaptiveConcurrencyLimit({ initial: 20, min: 5, max: 100, latencyTargetMs: 100, backoff: 0.5, clock });
    const slow = l.tryAcquire('redirect')!;
    clock.advance(150);
    slow.done();
    expect(l.limit).toBe(10);
    for (let i = 0; i < 400; i++) l.tryAcquire('redirect')!.done();
    expect(l.limit).toBe(20);
  });

  it('ignores a second done() of one permit', () => {
    const l = new AdaptiveConcurrencyLimit({ initial: 2, min: 1, max: 2, latencyTargetMs: 100, clock: fakeClock() });
    const p = l.tryAcquire('redirect')!;
    p.done();
    p.done();
    expect(l.inFlight).toBe(0);
  });
});

describe('RequestDeadline', () => {
  it('gives what is left of the current request, and Infinity outside one or once its answer started', async () => {
    const clock = fakeClock();
    let answered = false;
    expect(RequestDeadline.remainingMs(clock)).toBe(Number.POSITIVE_INFINITY);
    await RequestDeadline.run(
      clock.now() + 500,
      () => answered,
      async () => {
        clock.advance(200);
        await Promise.resolve();
        expect(RequestDeadline.remainingMs(clock)).toBe(300);
        answered = true;
        expect(RequestDeadline.remainingMs(clock)).toBe(Number.POSITIVE_INFINITY);
      },
    );
  });
});
