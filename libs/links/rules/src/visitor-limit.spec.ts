import { GeoLocator } from '@shortlink/visitors-domain';
import { LinkRules } from './link-rules';
import { LocalVisitorWindows, VisitorLimit, VisitorWindowCount, VisitorWindowStore } from './visitor-limit';
import { CachedLink } from '@shortlink/links-domain';

const geo: GeoLocator = { countryOf: () => null, placeOf: () => ({ country: null, region: null, city: null }), builtAt: null, detail: 'country' };
const LINK: CachedLink = {
  id: '4242',
  tenantId: 't',
  targetUrl: 'https://example.com/main',
  redirectType: 302,
  expiresAt: null,
  status: 'active',
  version: 1,
  createdAt: 0,
  rules: { clicksPerIpPerMinute: 3 },
};
/** 10 s into a minute: every request below falls in one window. */
const T0 = 1_800_000_000_000 + 10_000;

describe('VisitorLimit (the per-link visitor limit across instances)', () => {
  let now: number;
  const clock = { now: () => now };
  beforeEach(() => (now = T0));

  /** One redirect instance: its rules, deciding on its VisitorLimit over the shared store. */
  const instance = (store: VisitorWindowStore | null) => {
    const visitors = new VisitorLimit(store, {}, clock);
    const rules = new LinkRules(geo, { isKnownExhausted: () => false }, { visitors });
    const visit = (address: string, counts = true): number => {
      const decision = rules.decide(LINK, { address, userAgent: 'ua', query: undefined, counts, acknowledged: false, passwordAccepted: false }, now);
      return decision.kind === 'limited' ? 429 : decision.kind === 'redirect' ? 302 : 0;
    };
    return { visit, visitors };
  };

  it('gives a visitor the limit over two instances together, one more at most per instance that had not read the last count', async () => {
    const store = new LocalVisitorWindows(clock);
    const [a, b] = [instance(store), instance(store)];
    const statuses = [];
    for (let i = 0; i < 8; i++) {
      statuses.push([a, b][i % 2].visit('203.0.113.1'));
      now += 100;
      await Promise.all([a.visitors.merge(), b.visitors.merge()]);
    }
    // An instance reads the shared total only when it merges counts of its own: b's 2nd request was
    // decided on the total b read after its 1st (2), not on a's 2nd since (3). Every request after it
    // was refused, on both: limit + 1, where each instance deciding alone would have given 3 + 3.
    expect(statuses).toEqual([302, 302, 302, 302, 429, 429, 429, 429]);
    expect(b.visit('203.0.113.2')).toBe(302); // another visitor has a window of its own
  });

  it('decides without the store between merges, so two instances may each give the limit in one interval, and refuse once merged', async () => {
    const store = new LocalVisitorWindows(clock);
    const [a, b] = [instance(store), instance(store)];
    let added = 0;
    const counting: VisitorWindowStore = { add: (counts, windowMs) => ((added += counts.length), store.add(counts, windowMs)) };
    const [c, d] = [instance(counting), instance(counting)];
    expect([a.visit('203.0.113.3'), a.visit('203.0.113.3'), b.visit('203.0.113.3'), b.visit('203.0.113.3')]).toEqual([302, 302, 302, 302]);
    expect(a.visit('203.0.113.3')).toBe(302);
    expect(a.visit('203.0.113.3')).toBe(429); // its own count: the limit, whatever the others did
    await a.visitors.merge();
    await b.visitors.merge(); // b reads a's 3 with its own 2
    expect([a.visit('203.0.113.3'), b.visit('203.0.113.3')]).toEqual([429, 429]);
    // One call per merge with every visitor counted since the last one, none when nothing was counted.
    c.visit('203.0.113.4');
    c.visit('203.0.113.5');
    d.visit('203.0.113.4', false);
    await Promise.all([c.visitors.merge(), d.visitors.merge()]);
    expect(added).toBe(2);
  });

  it('counts a HEAD against nothing, and refuses it once the window is full, as the GET would be', async () => {
    const store = new LocalVisitorWindows(clock);
    const [a, b] = [instance(store), instance(store)];
    for (let i = 0; i < 5; i++) expect(a.visit('203.0.113.6', false)).toBe(302);
    for (let i = 0; i < 3; i++) expect(a.visit('203.0.113.6')).toBe(302);
    await a.visitors.merge();
    await b.visitors.merge();
    expect(b.visit('203.0.113.6')).toBe(302); // b has read nothing yet: it counted nothing of this visitor
    await b.visitors.merge();
    expect(b.visit('203.0.113.6', false)).toBe(429);
  });

  it('tells how long until the window ends, and starts afresh in the next one', () => {
    const visitors = new VisitorLimit(null, {}, clock);
    for (let i = 0; i < 3; i++) visitors.hit(LINK.id, '203.0.113.7', 3, true);
    expect(visitors.hit(LINK.id, '203.0.113.7', 3, true)).toEqual({ allowed: false, retryAfterSeconds: 50 });
    now += 50_000;
    expect(visitors.hit(LINK.id, '203.0.113.7', 3, true).allowed).toBe(true);
  });

  it('keeps deciding on what it knows while the store fails, sends the counts again once it answers, and says so', async () => {
    const working = new LocalVisitorWindows(clock);
    let failing = false;
    const sent: VisitorWindowCount[][] = [];
    const store: VisitorWindowStore = {
      add: (counts, windowMs) => (sent.push([...counts]), failing ? Promise.reject(new Error('redis down')) : working.add(counts, windowMs)),
    };
    const changes: boolean[] = [];
    const visitors = new VisitorLimit(store, { onFallback: (down) => changes.push(down) }, clock);
    const other = new VisitorLimit(working, {}, clock);
    expect(visitors.hit(LINK.id, '203.0.113.8', 3, true).allowed).toBe(true);
    await visitors.merge(); // the shared total is 1 now
    failing = true;
    expect(other.hit(LINK.id, '203.0.113.8', 3, true).allowed).toBe(true);
    await other.merge(); // 2, which this instance will not read while the store fails
    expect(visitors.hit(LINK.id, '203.0.113.8', 3, true).allowed).toBe(true);
    await visitors.merge();
    expect(changes).toEqual([true]);
    // Its own counts and the last total it read: 1 + 1 = 2 < 3.
    expect(visitors.hit(LINK.id, '203.0.113.8', 3, true).allowed).toBe(true);
    expect(visitors.hit(LINK.id, '203.0.113.8', 3, true).allowed).toBe(false);
    failing = false;
    await visitors.merge();
    expect(changes).toEqual([true, false]);
    // The two counts of the outage reached the store, once (the failed send's delta was sent again with the next one).
    expect(sent.at(-1)).toEqual([{ linkId: LINK.id, address: '203.0.113.8', window: Math.floor(T0 / 60_000), delta: 2 }]);
    expect(await working.add([{ linkId: LINK.id, address: '203.0.113.8', window: Math.floor(T0 / 60_000), delta: 0 }], 60_000)).toEqual([4]);
  });

  it('merges on its timer once started, and sends what is left when stopped', async () => {
    jest.useFakeTimers();
    try {
      const store = new LocalVisitorWindows(clock);
      const visitors = new VisitorLimit(store, { syncIntervalMs: 100 }, clock);
      visitors.start();
      visitors.hit(LINK.id, '203.0.113.9', 3, true);
      const read = () => store.add([{ linkId: LINK.id, address: '203.0.113.9', window: Math.floor(T0 / 60_000), delta: 0 }], 60_000);
      expect(await read()).toEqual([0]);
      await jest.advanceTimersByTimeAsync(100);
      expect(await read()).toEqual([1]);
      visitors.hit(LINK.id, '203.0.113.9', 3, true);
      await visitors.stop();
      expect(await read()).toEqual([2]);
    } finally {
      jest.useRealTimers();
    }
  });
});
