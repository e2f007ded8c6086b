import { LocalRateWindows, PlanRateLimiter, RateWindowStore, slideWindow } from './rate-limits';

const PLANS = {
  free: { requestsPerMinute: 100, batchRowsPerDay: 1000, invitationsPerHour: 3, conversionsPerMonth: 2 },
  paid: { requestsPerMinute: 10_000, batchRowsPerDay: 1_000_000, invitationsPerHour: 50, conversionsPerMonth: 1000 },
};

describe('slideWindow', () => {
  it('counts a request while its one-second bucket is inside the last minute', () => {
    const buckets = new Map<number, number>();
    const t0 = 1_000_000_000_000; // a whole second
    for (let i = 0; i < 100; i++) expect(slideWindow(buckets, t0 + i * 10, 100, 60_000, 1).allowed).toBe(true);
    const refused = slideWindow(buckets, t0 + 30_000, 100, 60_000, 1);
    expect(refused).toEqual({ allowed: false, used: 100, waitMs: 30_000 });
    // 59.999 s after the first: the first bucket is still inside; at 60 s it has left.
    expect(slideWindow(buckets, t0 + 59_999, 100, 60_000, 1).allowed).toBe(false);
    expect(slideWindow(buckets, t0 + 60_000, 100, 60_000, 1)).toMatchObject({ allowed: true, used: 1 });
  });

  it('waits for as many buckets as the cost needs, and drops buckets that left', () => {
    const buckets = new Map<number, number>();
    const t0 = 2_000_000_000_000;
    slideWindow(buckets, t0, 10, 60_000, 4); // bucket 0
    slideWindow(buckets, t0 + 10_000, 10, 60_000, 4); // bucket 10
    expect(slideWindow(buckets, t0 + 20_000, 10, 60_000, 6)).toEqual({ allowed: false, used: 8, waitMs: 40_000 });
    expect(slideWindow(buckets, t0 + 20_000, 10, 60_000, 10)).toEqual({ allowed: false, used: 8, waitMs: 50_000 });
    slideWindow(buckets, t0 + 65_000, 10, 60_000, 1);
    expect([...buckets.values()]).toEqual([4, 1]);
  });
});

describe('PlanRateLimiter', () => {
  it('limits per tenant by plan and says what remains', async () => {
    const limiter = new PlanRateLimiter(new LocalRateWindows(), PLANS);
    let last;
    for (let i = 0; i < 100; i++) last = await limiter.request('tenant-a', 'free');
    expect(last).toMatchObject({ allowed: true, limit: 100, remaining: 0 });
    const refused = await limiter.request('tenant-a', 'free');
    expect(refused).toMatchObject({ allowed: false, limit: 100, remaining: 0 });
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(59);
    expect(await limiter.request('tenant-b', 'free')).toMatchObject({ allowed: true, remaining: 99 });
    expect(await limiter.request('tenant-c', 'paid')).toMatchObject({ allowed: true, limit: 10_000, remaining: 9_999 });
  });

  it('grants batch rows up to the daily cap, partly when only part fits', async () => {
    const limiter = new PlanRateLimiter(new LocalRateWindows(), PLANS);
    expect((await limiter.batchRows('t', 'free', 600)).granted).toBe(600);
    const partly = await limiter.batchRows('t', 'free', 600);
    expect(partly.granted).toBe(400);
    expect(partly.decision.remaining).toBe(0);
    expect((await limiter.batchRows('t', 'free', 1)).granted).toBe(0);
  });

  it('lets a tenant send its plan’s invitations in a sliding hour, then answers INVITATION_LIMIT_REACHED with the wait; other tenants and plans apart', async () => {
    let now = Date.UTC(2026, 11, 7, 10, 0, 0);
    const limiter = new PlanRateLimiter(new LocalRateWindows({ now: () => now }), PLANS);
    for (let i = 0; i < 3; i++) {
      await limiter.invitation('t', 'free');
      now += 10 * 60_000; // at 10:00, 10:10 and 10:20
    }
    // At 10:30 the first leaves the window at 11:00.
    await expect(limiter.invitation('t', 'free')).rejects.toMatchObject({ code: 'INVITATION_LIMIT_REACHED', details: { limit: 3, retryAfterSeconds: 1800 } });
    await limiter.invitation('other', 'free');
    for (let i = 0; i < 50; i++) await limiter.invitation('big', 'paid');
    await expect(limiter.invitation('big', 'paid')).rejects.toMatchObject({ code: 'INVITATION_LIMIT_REACHED' });
    now = Date.UTC(2026, 11, 7, 11, 0, 0);
    await limiter.invitation('t', 'free');
    await expect(limiter.invitation('t', 'free')).rejects.toMatchObject({ code: 'INVITATION_LIMIT_REACHED' });
  });

  it('counts a tenant’s plan of conversions per sliding 30 days, then answers CONVERSION_LIMIT_REACHED with the wait', async () => {
    let now = Date.UTC(2026, 11, 7, 0, 0, 0);
    const limiter = new PlanRateLimiter(new LocalRateWindows({ now: () => now }), PLANS);
    await limiter.conversion('t', 'free');
    now += 10 * 86_400_000;
    await limiter.conversion('t', 'free');
    const refused = limiter.conversion('t', 'free');
    // The first leaves the 30 days (12-hour buckets) after 20 more days.
    await expect(refused).rejects.toMatchObject({ code: 'CONVERSION_LIMIT_REACHED', details: { limit: 2, retryAfterSeconds: 20 * 86_400 } });
    await limiter.conversion('other', 'free');
    await limiter.conversion('big', 'paid');
    now += 20 * 86_400_000;
    await limiter.conversion('t', 'free');
  });

  it('counts in its own window while the shared store fails, and says when it falls back and recovers', async () => {
    let down = true;
    const shared = new LocalRateWindows();
    const flaky: RateWindowStore = { hit: (...args) => (down ? Promise.reject(new Error('CLUSTERDOWN')) : shared.hit(...args)) };
    const events: boolean[] = [];
    const limiter = new PlanRateLimiter(flaky, PLANS, (isDown) => events.push(isDown));
    const results = [];
    for (let i = 0; i < 101; i++) results.push((await limiter.request('k', 'free')).allowed);
    expect(results.filter(Boolean)).toHaveLength(100);
    down = false;
    expect(await limiter.request('k', 'free')).toMatchObject({ allowed: true, remaining: 99 });
    expect(events).toEqual([true, false]);
  });
});
