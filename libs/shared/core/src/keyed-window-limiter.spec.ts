import { KeyedWindowLimiter } from './keyed-window-limiter';

describe('KeyedWindowLimiter', () => {
  it('allows the limit per window per key and tells when to retry', () => {
    const rl = new KeyedWindowLimiter({ limit: 3, windowMs: 60_000 });
    const t = 120_000;
    expect([1, 2, 3].map(() => rl.hit('1.2.3.4', t).allowed)).toEqual([true, true, true]);
    expect(rl.check('1.2.3.4', t)).toEqual({ allowed: false, retryAfterSeconds: 60 });
    expect(rl.hit('1.2.3.4', t)).toEqual({ allowed: false, retryAfterSeconds: 60 });
    expect(rl.hit('5.6.7.8', t).allowed).toBe(true);
    expect(rl.hit('1.2.3.4', t + 60_000).allowed).toBe(true);
  });

  it('giveBack() takes back one event of the current window only', () => {
    const rl = new KeyedWindowLimiter({ limit: 2, windowMs: 60_000 });
    expect([rl.hit('k', 0).allowed, rl.hit('k', 0).allowed, rl.hit('k', 0).allowed]).toEqual([true, true, false]);
    rl.giveBack('k', 0);
    rl.giveBack('k', 0);
    expect(rl.hit('k', 0).allowed).toBe(true);
    expect(rl.hit('k', 0).allowed).toBe(false);
    rl.giveBack('k', 60_000); // the window turned: nothing of it to take back
    expect(rl.hit('k', 60_000).allowed).toBe(true);
    rl.giveBack('unknown', 0);
    expect(rl.usage.keys).toBe(1);
  });

  it('check() does not count', () => {
    const rl = new KeyedWindowLimiter({ limit: 1, windowMs: 60_000 });
    for (let i = 0; i < 5; i++) expect(rl.check('k', 0).allowed).toBe(true);
    expect(rl.hit('k', 0).allowed).toBe(true);
    expect(rl.check('k', 0).allowed).toBe(false);
  });

  it('stays within its byte bound however long and numerous the keys are', () => {
    const rl = new KeyedWindowLimiter({ limit: 10, windowMs: 60_000, maxKeys: 1_000_000, maxBytes: 64 * 1024 });
    for (let i = 0; i < 20_000; i++) rl.hit(`${i}-${'x'.repeat(200)}`, 0);
    expect(rl.usage.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(rl.usage.keys).toBeLessThan(200);
  });

  it('is off with a limit of 0', () => {
    const rl = new KeyedWindowLimiter({ limit: 0, windowMs: 1000 });
    for (let i = 0; i < 100; i++) expect(rl.hit('k').allowed).toBe(true);
    expect(rl.usage.keys).toBe(0);
  });
});
