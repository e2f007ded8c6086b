import { EventLoopLag } from './loop-lag';

describe('EventLoopLag', () => {
  const clockAt = (t: { now: number }) => ({ now: () => t.now });

  it('is 0 while ticks come on time', () => {
    const t = { now: 1000 };
    const lag = new EventLoopLag(20, clockAt(t));
    for (let i = 0; i < 5; i++) {
      t.now += 20;
      lag.tick();
    }
    expect(lag.lagMs()).toBe(0);
  });

  it('is the lateness of the last tick', () => {
    const t = { now: 1000 };
    const lag = new EventLoopLag(20, clockAt(t));
    t.now += 320; // the loop was busy for 300 ms beyond the interval
    lag.tick();
    expect(lag.lagMs()).toBe(300);
    t.now += 20;
    lag.tick();
    expect(lag.lagMs()).toBe(0);
  });

  it('counts an overdue tick while the loop is busy now', () => {
    const t = { now: 1000 };
    const lag = new EventLoopLag(20, clockAt(t));
    t.now += 20;
    lag.tick();
    t.now += 520; // no tick for 520 ms: whatever runs now has waited about 500 ms
    expect(lag.lagMs()).toBe(500);
  });
});
