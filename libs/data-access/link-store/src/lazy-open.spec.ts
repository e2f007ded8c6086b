import { LazyOpen } from './lazy-open';

describe('LazyOpen', () => {
  it('opens once for concurrent callers, retries after a failure once the retry delay passed', async () => {
    let attempts = 0;
    let fail = true;
    const lazy = new LazyOpen('thing', async () => {
      attempts++;
      if (fail) throw new Error('ECONNREFUSED');
      return { close: async () => undefined };
    }, 50);
    await expect(Promise.all([lazy.get(), lazy.get()])).rejects.toThrow('ECONNREFUSED');
    expect(attempts).toBe(1);
    await expect(lazy.get()).rejects.toThrow(/unreachable \(ECONNREFUSED\); retrying/);
    expect(attempts).toBe(1);
    fail = false;
    await new Promise((r) => setTimeout(r, 60));
    const a = await lazy.get();
    expect(await lazy.get()).toBe(a);
    expect(attempts).toBe(2);
  });
});
