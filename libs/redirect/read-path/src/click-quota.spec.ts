import { CachedLink } from '@shortlink/links-domain';
import { InMemoryCache, InMemoryClickCounts } from './testing/in-memory-cache-store';
import { CacheKeys } from './cache-keys';
import { ClickQuota, ReservationOutcome } from './click-quota';

const ID = { domain: 'sho.rt', code: 'capped1' };

const cached = (maxClicks: number, id = '4242'): CachedLink => ({
  id,
  tenantId: 't',
  targetUrl: 'https://example.com/',
  redirectType: 302,
  expiresAt: null,
  status: 'active',
  version: 1,
  createdAt: 0,
  rules: { maxClicks },
});

/** `n` requests in one event-loop turn; resolves with their outcomes once answered. */
const burst = (quota: ClickQuota, n: number, link = cached(100)) =>
  Promise.all(Array.from({ length: n }, () => new Promise<ReservationOutcome>((resolve) => quota.reserve(link, ID, resolve))));
const granted = (outcomes: ReservationOutcome[]) => outcomes.filter((o) => o === 'granted').length;

describe('ClickQuota (maxClicks)', () => {
  let cache: InMemoryCache;
  let shard: InMemoryClickCounts;
  // A few links per test: 1000 remembered, not the production 100 000 (whose arrays cost ~20 ms per quota inside jest).
  const quota = (flushIntervalMs = 60_000) => new ClickQuota(cache, shard, { flushIntervalMs, maxLinks: 1000 });

  beforeEach(async () => {
    cache = new InMemoryCache();
    shard = new InMemoryClickCounts();
    shard.counts.set('4242', 0);
  });

  it('grants exactly the limit to 1000 concurrent requests over two instances sharing the counter', async () => {
    const [a, b] = [quota(), quota()];
    const outcomes = await Promise.all([burst(a, 300), burst(b, 300), burst(a, 200), burst(b, 200)]);
    expect(granted(outcomes.flat())).toBe(100);
    expect(outcomes.flat().filter((o) => o === 'exhausted')).toHaveLength(900);
    expect(cache.values.get(CacheKeys.clickCounter('4242'))).toBe('100');
  });

  it('takes the requests of one turn in one call to the shared cache, the first ones granted', async () => {
    const q = quota();
    const calls: number[] = [];
    const reserve = cache.reserveBelow.bind(cache);
    cache.reserveBelow = (k, limit, wanted, floor, seed) => (calls.push(wanted), reserve(k, limit, wanted, floor, seed));
    await burst(q, 30);
    const outcomes = await burst(q, 80);
    expect(calls).toEqual([30, 30, 80]); // the first call found no counter: it was started from the shard's count
    expect(outcomes.slice(0, 70).every((o) => o === 'granted')).toBe(true);
    expect(outcomes.slice(70).every((o) => o === 'exhausted')).toBe(true);
  });

  it("starts a missing counter from the shard's count", async () => {
    await shard.addClicks(ID, '4242', 95);
    const outcomes = await burst(quota(), 10);
    expect(granted(outcomes)).toBe(5);
  });

  it('after a lost counter allows at most the clicks not yet flushed, and exactly that many', async () => {
    const q = quota();
    expect(granted(await burst(q, 30))).toBe(30);
    await q.flush();
    expect(await shard.clickCount(ID, '4242')).toBe(30);
    expect(granted(await burst(q, 15))).toBe(15);
    expect(q.unflushedClicks).toBe(15);
    cache.values.delete(CacheKeys.clickCounter('4242')); // evicted, or lost in a failover
    const after = granted(await burst(q, 500));
    expect(after).toBe(70); // 100 - 30 flushed: the 15 unflushed clicks are granted a second time
    const total = 30 + 15 + after;
    expect(total - 100).toBeLessThanOrEqual(15);
    expect(total - 100).toBe(15);
  });

  it('puts a grant past half the limit on the shard before answering: losing the counter and the instance right after 90 of 100 clicks costs none', async () => {
    const q = quota(); // flushes on its own every minute only
    const flushedBeforeAnswer: number[] = [];
    const outcomes = await Promise.all(
      Array.from(
        { length: 90 },
        () =>
          new Promise<ReservationOutcome>((resolve) => q.reserve(cached(100), ID, (o) => (flushedBeforeAnswer.push(shard.counts.get('4242')!), resolve(o)))),
      ),
    );
    expect(granted(outcomes)).toBe(90);
    expect(Math.min(...flushedBeforeAnswer)).toBe(90);
    expect(q.unflushedClicks).toBe(0);
    // The instance is SIGKILLed (nothing more is flushed) and the counter is lost: another instance starts it from the shard.
    cache.values.delete(CacheKeys.clickCounter('4242'));
    expect(granted(await burst(quota(), 200))).toBe(10);
  });

  it('below half the limit leaves the grant to the periodic flush: no shard write per redirect', async () => {
    const q = quota();
    expect(granted(await burst(q, 50))).toBe(50);
    expect(await shard.clickCount(ID, '4242')).toBe(0);
    expect(q.unflushedClicks).toBe(50);
    expect(granted(await burst(q, 1))).toBe(1);
    expect(await shard.clickCount(ID, '4242')).toBe(51);
  });

  it('keeps an exhausted link exhausted through a lost counter: the final count is flushed at once', async () => {
    const q = quota();
    expect(granted(await burst(q, 150))).toBe(100);
    expect(await shard.clickCount(ID, '4242')).toBe(100); // flushed before the answers
    cache.values.delete(CacheKeys.clickCounter('4242'));
    const fresh = quota(); // another instance, which never saw the link
    expect(granted(await burst(fresh, 50))).toBe(0);
  });

  it('seeds a lost counter from the shard, not from an older total one instance flushed before the other', async () => {
    const [a, b] = [quota(), quota()];
    expect(granted(await burst(a, 30))).toBe(30);
    await a.flush(); // a knows the shard at 30
    expect(granted(await burst(b, 30))).toBe(30);
    await b.flush(); // the shard is at 60 now
    cache.values.delete(CacheKeys.clickCounter('4242'));
    expect(granted(await burst(a, 100))).toBe(40);
  });

  it('raises a counter a failover set back to the total this instance last flushed', async () => {
    const q = quota();
    expect(granted(await burst(q, 70))).toBe(70);
    await q.flush();
    cache.values.set(CacheKeys.clickCounter('4242'), '50'); // a replica promoted before it had the last 20
    expect(granted(await burst(q, 100))).toBe(30);
  });

  it('knows an exhausted link without asking again, until its limit is raised', async () => {
    const q = quota();
    await burst(q, 100);
    expect(q.isKnownExhausted(cached(100))).toBe(true);
    expect(q.isKnownExhausted(cached(150))).toBe(false);
    expect(granted(await burst(q, 80, cached(150)))).toBe(50);
    expect(await q.isExhausted(cached(150), ID)).toBe(true);
    expect(await quota().isExhausted(cached(151), ID)).toBe(false);
  });

  it('answers unavailable when the shared counter cannot be reached, and flushes once the shard is back', async () => {
    const q = quota();
    expect(granted(await burst(q, 10))).toBe(10);
    cache.down = true;
    expect(await burst(q, 3)).toEqual(['unavailable', 'unavailable', 'unavailable']);
    cache.down = false;
    shard.down = true;
    await q.flush();
    expect(q.unflushedClicks).toBe(10);
    shard.down = false;
    await q.flush();
    expect(q.unflushedClicks).toBe(0);
    expect(await shard.clickCount(ID, '4242')).toBe(10);
  });

  it('drops the count of a link deleted meanwhile, and flushes what is left on close', async () => {
    const q = quota();
    await burst(q, 5);
    shard.counts.delete('4242'); // the link was deleted
    await q.close();
    expect(q.unflushedClicks).toBe(0);
  });
});
