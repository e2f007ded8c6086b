import { LocalVisitorWindows, VisitorLimit, VisitorWindowStore } from './visitor-limit';
import { QrScans } from './qr-scans';

/** 10 s into a minute. */
const T0 = 1_800_000_000_000 + 10_000;

describe('QrScans (docs/design.md, "QR codes")', () => {
  let now: number;
  const clock = { now: () => now };
  beforeEach(() => (now = T0));
  /** One redirect instance's view of the scans, over the windows every instance shares. */
  const instance = (store: VisitorWindowStore | null, limit = 3) => {
    const windows = new VisitorLimit(store, {}, clock);
    return { scans: new QrScans(limit, windows), windows };
  };
  const run = async (instances: Array<ReturnType<typeof instance>>, address: string, n: number) => {
    const counted: boolean[] = [];
    for (let i = 0; i < n; i++) {
      const one = instances[i % instances.length];
      counted.push(one.scans.counts('4242', address));
      // Each instance merges with the shared windows between two scans (its background merge, made an explicit step).
      await one.windows.merge();
    }
    return counted;
  };

  it('counts the limit of scans per visitor and link in a minute over two instances together (within the merge bound), then none until the next minute', async () => {
    const store = new LocalVisitorWindows(clock);
    const both = [instance(store), instance(store)];
    // Each instance decides on its own counts and the shared total it last read: over two instances
    // that merge between scans, at most one scan more than the limit (docs/design.md, "Link options").
    const first = await run(both, '203.0.113.1', 6);
    expect(first.filter(Boolean).length).toBeGreaterThanOrEqual(3);
    expect(first.filter(Boolean).length).toBeLessThanOrEqual(4);
    expect(first.slice(4)).toEqual([false, false]);
    expect(await run(both, '203.0.113.1', 2)).toEqual([false, false]);
    expect(both[1].scans.counts('4242', '203.0.113.2')).toBe(true); // another visitor
    expect(both[0].scans.counts('4343', '203.0.113.1')).toBe(true); // another link
    now += 50_000; // the next minute
    const next = await run(both, '203.0.113.1', 6);
    expect(next.filter(Boolean).length).toBeLessThanOrEqual(4);
    expect(next.slice(0, 3)).toEqual([true, true, true]);
  });

  it('keeps its scans apart from the visitor limit of the same link (clicksPerIpPerMinute)', async () => {
    const store = new LocalVisitorWindows(clock);
    const one = instance(store);
    for (let i = 0; i < 3; i++) one.scans.counts('4242', '203.0.113.3');
    expect(one.windows.hit('4242', '203.0.113.3', 1, true).allowed).toBe(true);
  });

  it("decides on the instance's own counts while the shared store fails", async () => {
    const failing: VisitorWindowStore = { add: () => Promise.reject(new Error('redis down')) } as unknown as VisitorWindowStore;
    expect(await run([instance(failing)], '203.0.113.4', 5)).toEqual([true, true, true, false, false]);
  });

  it('counts every visit as a scan with the limit 0', async () => {
    expect(await run([instance(new LocalVisitorWindows(clock), 0)], '203.0.113.5', 20)).toEqual(Array(20).fill(true));
  });
});
