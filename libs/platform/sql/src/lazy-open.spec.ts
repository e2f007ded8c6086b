import { forwardWhenOpen, LazyOpen } from './lazy-open';

describe('LazyOpen', () => {
  // The retry delay is measured on Date.now: a fake clock, so that a slow machine cannot make it pass early.
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('opens once for concurrent callers, retries after a failure once the retry delay passed', async () => {
    let attempts = 0;
    let fail = true;
    const lazy = new LazyOpen(
      'thing',
      async () => {
        attempts++;
        if (fail) throw new Error('ECONNREFUSED');
        return { close: async () => undefined };
      },
      50,
    );
    await expect(Promise.all([lazy.get(), lazy.get()])).rejects.toThrow('ECONNREFUSED');
    expect(attempts).toBe(1);
    await expect(lazy.get()).rejects.toThrow(/unreachable \(ECONNREFUSED\); retrying/);
    expect(attempts).toBe(1);
    fail = false;
    jest.advanceTimersByTime(49);
    await expect(lazy.get()).rejects.toThrow(/retrying/);
    expect(attempts).toBe(1);
    jest.advanceTimersByTime(11);
    const a = await lazy.get();
    expect(await lazy.get()).toBe(a);
    expect(attempts).toBe(2);
  });
});

describe('forwardWhenOpen', () => {
  class Adder {
    async add(a: number, b: number) {
      return a + b;
    }
  }

  it('opens on the first call, forwards arguments and results, fails calls while closed, and has only the prototype’s methods', async () => {
    let opened = 0;
    let up = true;
    const lazy = new LazyOpen(
      'meta',
      async () => {
        opened++;
        if (!up) throw new Error('ECONNREFUSED');
        return { part: new Adder(), close: async () => undefined };
      },
      0,
    );
    const part = forwardWhenOpen(lazy, (s) => s.part, Adder.prototype);
    expect(opened).toBe(0);
    expect(await Promise.resolve(part)).toBe(part);
    expect((part as unknown as Record<string, unknown>).onModuleInit).toBeUndefined();
    expect(await part.add(2, 3)).toBe(5);
    expect(await part.add(4, 4)).toBe(8);
    expect(opened).toBe(1);
    await lazy.close();
    up = false;
    await expect(part.add(1, 1)).rejects.toThrow('ECONNREFUSED');
  });
});
