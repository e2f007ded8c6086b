import { CachedLink } from '@shortlink/links-domain';
import { InMemoryClickCounts } from './testing/in-memory-cache-store';
import { ClickLeaseAnswer, ClickLeaseCall, ClickLeaseStore, LocalClickLeases } from './click-leases';
import { ClickQuota, ReservationOutcome } from './click-quota';

const ID = { domain: 'sho.rt', code: 'capped1' };
const LINK_ID = '4242';

const cached = (maxClicks: number, id = LINK_ID): CachedLink => ({
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

/** The shared counters of the unit tests: in-process, on a clock the test moves, with a switch that makes every call fail. */
class Counters implements ClickLeaseStore {
  now = 1_800_000_000_000;
  down = false;
  /** While set, a call waits for it before the store acts (a call in flight). */
  gate: Promise<void> | null = null;
  readonly calls: ClickLeaseCall[] = [];
  readonly inner = new LocalClickLeases({ now: () => this.now });
  async settle(linkId: string, call: ClickLeaseCall): Promise<ClickLeaseAnswer | null> {
    if (this.down) throw new Error('ECONNREFUSED');
    this.calls.push(call);
    if (this.gate) await this.gate;
    return this.inner.settle(linkId, call);
  }
  async peek(linkId: string) {
    if (this.down) throw new Error('ECONNREFUSED');
    return this.inner.peek(linkId);
  }
}

/** `n` requests in one event-loop turn; resolves with their outcomes once answered. */
const burst = (quota: ClickQuota, n: number, link = cached(100)) =>
  Promise.all(Array.from({ length: n }, () => new Promise<ReservationOutcome>((resolve) => quota.reserve(link, ID, resolve))));
const granted = (outcomes: ReservationOutcome[]) => outcomes.filter((o) => o === 'granted').length;
/** `turns` event-loop turns of `perTurn` requests each, one after the other. */
const turns = async (quota: ClickQuota, count: number, perTurn: number, link = cached(100)) => {
  const all: ReservationOutcome[] = [];
  for (let i = 0; i < count; i++) all.push(...(await burst(quota, perTurn, link)));
  return all;
};

describe('ClickQuota (maxClicks)', () => {
  let counters: Counters;
  let shard: InMemoryClickCounts;
  // A few links per test: 1000 remembered, not the production 100 000 (whose arrays cost ~20 ms per quota inside jest).
  const quota = (o: { leaseMs?: number } = {}) =>
    new ClickQuota({ store: counters, counts: shard }, { flushIntervalMs: 60_000, leaseMs: o.leaseMs ?? 2000, maxLinks: 1000 });
  const used = async () => (await counters.inner.peek(LINK_ID))!;

  beforeEach(async () => {
    counters = new Counters();
    shard = new InMemoryClickCounts();
    shard.counts.set(LINK_ID, 0);
  });

  it('grants exactly the limit to 1000 concurrent requests over two instances sharing the counter', async () => {
    const [a, b] = [quota(), quota()];
    const outcomes = await Promise.all([burst(a, 300), burst(b, 300), burst(a, 200), burst(b, 200)]);
    expect(granted(outcomes.flat())).toBe(100);
    expect(outcomes.flat().filter((o) => o === 'exhausted')).toHaveLength(900);
    expect(await used()).toEqual({ used: 100, taken: 100 });
  });

  it('grants exactly the limit to requests spread over many turns and two instances, their leases and syncs interleaved', async () => {
    const [a, b] = [quota(), quota()];
    const outcomes: ReservationOutcome[] = [];
    for (let round = 0; round < 40; round++) {
      outcomes.push(...(await Promise.all([burst(a, 2, cached(60)), burst(b, 1, cached(60))])).flat());
      if (round % 3 === 0) await Promise.all([a.sync(), b.sync()]);
    }
    expect(granted(outcomes)).toBe(60);
    expect((await used()).used).toBe(60);
  });

  it('gives from its lease without asking the store: one call per sync period for a busy link, not one per turn', async () => {
    const q = quota();
    const link = cached(1_000_000);
    expect(granted(await burst(q, 10, link))).toBe(10); // the first turn asks: 10 at once and a reserve of 20, of which 10 before the next call
    const asked = counters.calls.length;
    expect(granted(await turns(q, 5, 2, link))).toBe(10);
    expect(counters.calls.length).toBe(asked); // all 10 given from the reserve
    await q.sync(); // reports the 10, tops the reserve up
    expect(counters.calls.length).toBe(asked + 1);
    expect(counters.calls.at(-1)).toMatchObject({ given: 10, use: 0 });
    expect(await used()).toMatchObject({ used: 20 });
    expect(granted(await turns(q, 5, 2, link))).toBe(10);
    expect(counters.calls.length).toBe(asked + 1);
    // Past its cap before the next sync, a turn's requests ask at once (one call for the turn).
    expect(granted(await turns(q, 3, 4, link))).toBe(12);
    expect(counters.calls.length).toBeGreaterThan(asked + 1);
  });

  it('sizes leases from what is left below half the limit and the instances holding one, shrinking to one; past half each turn takes its own', async () => {
    const [a, b] = [quota(), quota()];
    const link = cached(100);
    await burst(a, 1, link); // a: 1 used, a reserve of 2 (its demand)
    await burst(b, 10, link); // b: 10 used, a reserve of min(20, ceil((50 − 13) / (2 × 2 holders))) = 10
    expect([a.reservedClicks, b.reservedClicks]).toEqual([2, 10]);
    const reserves: number[] = [];
    for (let i = 0; i < 8; i++) {
      await burst(b, 10, link);
      reserves.push(b.reservedClicks);
      const { taken } = await used();
      if (taken > 50) expect(b.reservedClicks).toBe(0); // none past half
    }
    expect(reserves).toEqual([0, 5, 2, 0, 0, 0, 0, 0]); // the first turn gave all 10 from the reserve
    // Past half, no reserve: every turn's requests are one call, granted in order; the rest wait for a's
    // reserve, which a gives back once it had no demand for a sync period, and then the link is exhausted.
    const before = counters.calls.length;
    const last = burst(b, 30, link);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(counters.calls.length).toBe(before + 1);
    await a.sync();
    await a.sync();
    await b.sync();
    expect(granted(await last)).toBe(100 - 91);
    expect(await used()).toEqual({ used: 100, taken: 100 });
  });

  it('takes what it gave while a call was out off the reserve the call answers with: never more than the limit', async () => {
    const [a, b] = [quota(), quota()];
    const link = cached(20);
    expect(granted(await burst(a, 4, link))).toBe(4); // 4 used, a reserve of 3 (what is left below half, 6, over 2)
    expect(granted(await turns(a, 2, 1, link))).toBe(2);
    let open!: () => void;
    counters.gate = new Promise((r) => (open = r));
    const syncing = a.sync(); // reports 2 given and asks for more: held until the gate opens
    await new Promise((r) => setImmediate(r));
    expect(granted(await turns(a, 1, 1, link))).toBe(1); // the last of the reserve, given while the call is out
    counters.gate = null;
    open();
    await syncing; // the store answers a reserve of 3, counting only the 2 the call reported
    // What a may still give, with the one it gave unreported, is exactly the reserve the store holds for it.
    const { used: u, taken } = await used();
    expect(a.reservedClicks + 1).toBe(taken - u);
    const after = granted(await turns(a, 6, 1, link));
    const rest = granted(await burst(b, 100, link));
    expect(4 + 2 + 1 + after + rest).toBe(20);
    await a.close();
    expect(await used()).toEqual({ used: 20, taken: 20 });
  });

  it("starts a missing counter from the shard's count", async () => {
    await shard.addClicks(ID, LINK_ID, 95);
    expect(granted(await burst(quota(), 10))).toBe(5);
  });

  it('gives its unused reserve back at shutdown, and flushes every click it gave', async () => {
    const q = quota();
    expect(granted(await burst(q, 5, cached(1000)))).toBe(5);
    expect(q.reservedClicks).toBe(10);
    expect(granted(await burst(q, 3, cached(1000)))).toBe(3); // from the reserve
    await q.close();
    expect(await used()).toEqual({ used: 8, taken: 8 });
    expect(await shard.clickCount(ID, LINK_ID)).toBe(8);
  });

  it('brings a crashed instance’s reserve back after the lease’s time, counting its cap as given: never a click too many', async () => {
    const a = quota();
    const link = cached(40);
    expect(granted(await burst(a, 4, link))).toBe(4); // 4 used, a reserve of 8 of which 4 (its cap) before its next call
    expect(granted(await turns(a, 3, 1, link))).toBe(3); // given from the reserve, not reported: a is SIGKILLed now
    expect(await used()).toEqual({ used: 4, taken: 12 });
    const b = quota();
    counters.now += 1000;
    // a's lease still runs: 40 − 12 = 28 is all b may take; its other requests wait for a's reserve.
    const first = burst(b, 100, link);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    counters.now += 1500; // a's lease is over: its cap (4, at least the 3 it gave) counts as given, the other 4 come back
    await b.sync();
    expect(granted(await first)).toBe(28 + 4);
    expect(await used()).toEqual({ used: 40, taken: 40 });
    // Every redirect given: 4 + 3 by a, 32 by b, 39: one short of the limit (the part of a's cap it had not used), never one more.
  });

  it('after a lost counter allows at most the clicks not yet flushed and the reserve held, and exactly that many', async () => {
    const q = quota();
    expect(granted(await turns(q, 30, 1))).toBe(30);
    await q.sync();
    await q.flush();
    expect(await shard.clickCount(ID, LINK_ID)).toBe(30);
    expect(granted(await turns(q, 15, 1))).toBe(15);
    await q.sync();
    const atRisk = { unflushed: q.unflushedClicks, reserved: q.reservedClicks };
    expect(atRisk.unflushed).toBe(15);
    expect(atRisk.reserved).toBeGreaterThan(0);
    counters.inner.forget(LINK_ID); // evicted, or lost in a failover
    // One turn: what the reserve still holds is given before the store is asked, the rest from the counter started again at 30.
    const after = granted(await burst(q, 500));
    const total = 30 + 15 + after;
    expect(total - 100).toBe(atRisk.unflushed + atRisk.reserved);
    // The next call tells the instance its reserve is gone: nothing more.
    expect(granted(await burst(q, 50))).toBe(0);
  });

  it('after a lost counter, takes back what it had not flushed once the shard has it (past half, before answering)', async () => {
    const q = quota();
    expect(granted(await turns(q, 30, 1))).toBe(30);
    await q.sync();
    await q.flush();
    expect(granted(await turns(q, 15, 1))).toBe(15);
    await q.sync();
    const reserved = q.reservedClicks;
    counters.inner.forget(LINK_ID);
    // Requests a few at a time: the first grant past half flushes the 15 to the shard, whose total then raises the counter.
    const after = granted(await turns(q, 100, 5));
    expect(30 + 15 + after).toBeLessThanOrEqual(100 + reserved);
    expect(await shard.clickCount(ID, LINK_ID)).toBe(30 + 15 + after);
  });

  it('puts a grant past half the limit on the shard before answering: losing the counter and the instance right after 90 of 100 clicks costs none', async () => {
    const q = quota(); // flushes on its own every minute only
    const flushedBeforeAnswer: number[] = [];
    const answer = () =>
      new Promise<ReservationOutcome>((resolve) => q.reserve(cached(100), ID, (o) => (flushedBeforeAnswer.push(shard.counts.get(LINK_ID)!), resolve(o))));
    const outcomes: ReservationOutcome[] = [];
    for (let i = 0; i < 90; i++) {
      outcomes.push(await answer());
      if (i % 10 === 9) await q.sync();
    }
    expect(granted(outcomes)).toBe(90);
    expect(flushedBeforeAnswer.at(-1)).toBe(90);
    expect(q.unflushedClicks).toBe(0);
    // The instance is SIGKILLed (nothing more is flushed or given back) and the counter is lost: another instance starts it from the shard.
    counters.inner.forget(LINK_ID);
    expect(granted(await burst(quota(), 200))).toBe(10);
  });

  it('below half the limit leaves the grant to the periodic flush: no shard write per redirect', async () => {
    const q = quota();
    expect(granted(await burst(q, 50))).toBe(50);
    expect(await shard.clickCount(ID, LINK_ID)).toBe(0);
    expect(q.unflushedClicks).toBe(50);
    expect(granted(await burst(q, 1))).toBe(1);
    expect(await shard.clickCount(ID, LINK_ID)).toBe(51);
  });

  it('keeps an exhausted link exhausted through a lost counter: the final count is flushed at once', async () => {
    const q = quota();
    expect(granted(await burst(q, 150))).toBe(100);
    expect(await shard.clickCount(ID, LINK_ID)).toBe(100); // flushed before the answers
    counters.inner.forget(LINK_ID);
    expect(granted(await burst(quota(), 50))).toBe(0);
  });

  it('seeds a lost counter from the shard, not from an older total one instance flushed before the other', async () => {
    const [a, b] = [quota(), quota()];
    expect(granted(await burst(a, 30))).toBe(30);
    await a.close(); // a knows the shard at 30
    expect(granted(await burst(b, 30))).toBe(30);
    await b.close(); // the shard is at 60 now
    counters.inner.forget(LINK_ID);
    expect(granted(await burst(quota(), 100))).toBe(40);
  });

  it('raises a counter a failover set back to the total this instance last flushed', async () => {
    const q = quota();
    expect(granted(await burst(q, 70))).toBe(70);
    await q.flush();
    counters.inner.forget(LINK_ID);
    // A replica promoted before it had the last 20: it holds 50 (started so by an instance that read an older shard count).
    const older = new InMemoryClickCounts();
    older.counts.set(LINK_ID, 50);
    expect(granted(await burst(new ClickQuota({ store: counters, counts: older }, { flushIntervalMs: 60_000, maxLinks: 1000 }), 1))).toBe(1);
    expect((await used()).used).toBe(51);
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

  it('gives nothing more from a reserve taken under a limit since lowered', async () => {
    const q = quota();
    expect(granted(await burst(q, 10, cached(1000)))).toBe(10);
    expect(q.reservedClicks).toBe(20);
    expect(granted(await burst(q, 10, cached(12)))).toBe(2);
    expect((await used()).taken).toBeLessThanOrEqual(12);
  });

  it('gives within its cap while the store is unreachable, then answers unavailable; flushes once the shard is back', async () => {
    const q = quota();
    expect(granted(await burst(q, 10, cached(1000)))).toBe(10); // reserve 20, cap 10
    counters.down = true;
    const during = await turns(q, 14, 1, cached(1000));
    expect(during.slice(0, 10).every((o) => o === 'granted')).toBe(true);
    expect(during.slice(10)).toEqual(['unavailable', 'unavailable', 'unavailable', 'unavailable']);
    counters.down = false;
    shard.down = true;
    await q.flush();
    expect(q.unflushedClicks).toBe(20);
    shard.down = false;
    await q.flush();
    expect(q.unflushedClicks).toBe(0);
    await q.sync();
    expect(await used()).toMatchObject({ used: 20 });
  });

  it('asks again at the next sync when the clicks left are in another instance’s reserve, and grants them once it gives them back', async () => {
    const [a, b] = [quota(), quota()];
    const link = cached(10);
    expect(granted(await burst(a, 1, link))).toBe(1); // reserve 2
    expect(granted(await burst(b, 7, link))).toBe(7); // 10 − 3: the rest is in a's reserve
    const waiting = burst(b, 2, link);
    await new Promise((r) => setImmediate(r));
    await a.sync(); // a had no demand this period: it gives its reserve back
    await a.sync();
    await b.sync();
    expect(await waiting).toEqual(['granted', 'granted']);
    expect(await used()).toEqual({ used: 10, taken: 10 });
  });

  it('forgets a link quiet for a while, after giving its reserve back', async () => {
    const q = quota();
    await burst(q, 5, cached(1000));
    expect(q.reservedClicks).toBe(10);
    for (let i = 0; i < 6; i++) await q.sync();
    expect(q.reservedClicks).toBe(0);
    expect(await used()).toEqual({ used: 5, taken: 5 });
  });

  it('drops the count of a link deleted meanwhile, and flushes what is left on close', async () => {
    const q = quota();
    await burst(q, 5);
    shard.counts.delete(LINK_ID); // the link was deleted
    await q.close();
    expect(q.unflushedClicks).toBe(0);
  });
});
