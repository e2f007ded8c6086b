import { GeoLookup } from '@shortlink/visitors-domain';
import { CachedLink } from '../cached-link';
import { LinkRules } from './link-rules';
import { LocalVisitorWindows, SharedVisitorLimit, VisitorWindowStore } from './visitor-limit';

const geo: GeoLookup = { countryOf: () => null, builtAt: null };
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

describe('SharedVisitorLimit (the per-link visitor limit across instances)', () => {
  let now: number;
  const clock = { now: () => now };
  beforeEach(() => (now = T0));

  /** One redirect instance: its rules (the in-process window) and its view of the shared windows. */
  const instance = (store: VisitorWindowStore) => {
    const rules = new LinkRules(geo, { isKnownExhausted: () => false });
    const shared = new SharedVisitorLimit(store, { retryAfterFailureMs: 1000 }, clock);
    return async (address: string, counts = true): Promise<number> => {
      const decision = rules.decide(LINK, { address, userAgent: 'ua', query: undefined, counts, acknowledged: false, passwordAccepted: false }, now);
      if (decision.kind === 'limited') return 429;
      if (decision.kind !== 'redirect' || decision.visitorLimit === undefined) throw new Error(`unexpected ${decision.kind}`);
      return (await shared.admit(LINK.id, address, decision.visitorLimit, counts)).allowed ? 302 : 429;
    };
  };

  it('gives a visitor the limit over two instances together, not the limit on each', async () => {
    const store = new LocalVisitorWindows(clock);
    const [a, b] = [instance(store), instance(store)];
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push(await [a, b][i % 2]('203.0.113.1'));
    expect(statuses).toEqual([302, 302, 302, 429, 429, 429, 429, 429]);
    expect(await b('203.0.113.2')).toBe(302); // another visitor has a window of its own
  });

  it('counts a HEAD against nothing, and refuses it once the window is full, as the GET would be', async () => {
    const store = new LocalVisitorWindows(clock);
    const [a, b] = [instance(store), instance(store)];
    for (let i = 0; i < 5; i++) expect(await a('203.0.113.3', false)).toBe(302);
    for (let i = 0; i < 3; i++) expect(await [a, b][i % 2]('203.0.113.3')).toBe(302);
    expect(await b('203.0.113.3', false)).toBe(429);
  });

  it('tells how long until the shared window ends', async () => {
    const store = new LocalVisitorWindows(clock);
    const shared = new SharedVisitorLimit(store, {}, clock);
    for (let i = 0; i < 3; i++) await shared.admit(LINK.id, '203.0.113.4', 3, true);
    expect(await shared.admit(LINK.id, '203.0.113.4', 3, true)).toEqual({ allowed: false, retryAfterSeconds: 50 });
  });

  it('falls back to each instance’s own window while the store fails, leaves it alone for the pause, and shares again once it answers', async () => {
    const working = new LocalVisitorWindows(clock);
    let failing = true;
    let asked = 0;
    const changes: boolean[] = [];
    const store: VisitorWindowStore = {
      hit: (...args) => (asked++, failing ? Promise.reject(new Error('redis down')) : working.hit(...args)),
    };
    const rulesOf = () => new LinkRules(geo, { isKnownExhausted: () => false });
    const shared = new SharedVisitorLimit(store, { retryAfterFailureMs: 1000, onFallback: (down) => changes.push(down) }, clock);
    const [ra, rb] = [rulesOf(), rulesOf()];
    const visit = async (rules: LinkRules, address: string) => {
      const decision = rules.decide(LINK, { address, userAgent: 'ua', query: undefined, counts: true, acknowledged: false, passwordAccepted: false }, now);
      if (decision.kind !== 'redirect') return 429;
      return (await shared.admit(LINK.id, address, decision.visitorLimit!, true)).allowed ? 302 : 429;
    };
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push(await visit([ra, rb][i % 2], '203.0.113.5'));
    // Each instance still holds the visitor to the limit in its own window: 3 + 3, never every request.
    expect(statuses).toEqual([302, 302, 302, 302, 302, 302, 429, 429]);
    expect({ asked, changes }).toEqual({ asked: 1, changes: [true] });

    failing = false;
    now += 1001;
    expect(await visit(ra, '203.0.113.6')).toBe(302);
    expect({ asked, changes }).toEqual({ asked: 2, changes: [true, false] });
  });
});
