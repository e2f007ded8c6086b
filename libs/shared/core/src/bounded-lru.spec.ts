import { boundedLru } from './bounded-lru';

describe('boundedLru', () => {
  it('keeps at most maxEntries, the least recently used going first', () => {
    const lru = boundedLru<string, number>({ maxEntries: 3 });
    for (const k of ['a', 'b', 'c']) lru.set(k, 1);
    lru.get('a');
    lru.set('d', 1);
    expect([...lru.keys()].sort()).toEqual(['a', 'c', 'd']);
  });

  it('with bytes too, passes neither bound: many small entries stop at maxEntries, a few large ones at maxBytes', () => {
    const small = boundedLru<string, string>({ maxEntries: 10, maxBytes: 1000, sizeOf: (v) => v.length });
    for (let i = 0; i < 50; i++) small.set(`k${i}`, 'x');
    expect(small.size).toBe(10);
    const large = boundedLru<string, string>({ maxEntries: 10, maxBytes: 1000, sizeOf: (v) => v.length });
    for (let i = 0; i < 50; i++) large.set(`k${i}`, 'y'.repeat(300));
    expect(large.size).toBe(3);
    expect(large.countedBytes).toBe(900);
  });

  it('forgets an entry after its TTL', async () => {
    const lru = boundedLru<string, number>({ maxEntries: 10, ttlMs: 20 });
    lru.set('a', 1);
    expect(lru.get('a')).toBe(1);
    await new Promise((r) => setTimeout(r, 40));
    expect(lru.get('a')).toBeUndefined();
  });
});
