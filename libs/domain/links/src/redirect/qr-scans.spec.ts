import { LocalVisitorWindows, SharedVisitorLimit, VisitorWindowStore } from './visitor-limit';
import { QrScans } from './qr-scans';

/** 10 s into a minute. */
const T0 = 1_800_000_000_000 + 10_000;

describe('QrScans (docs/design.md, "QR codes")', () => {
  let now: number;
  const clock = { now: () => now };
  beforeEach(() => (now = T0));
  /** One redirect instance's view of the scans, over the windows every instance shares. */
  const instance = (store: VisitorWindowStore, limit = 3) => new QrScans(limit, new SharedVisitorLimit(store, { retryAfterFailureMs: 1000 }, clock), clock);
  const run = async (scans: QrScans[], address: string, n: number) => {
    const counted: boolean[] = [];
    for (let i = 0; i < n; i++) counted.push(await scans[i % scans.length].counts('4242', address));
    return counted;
  };

  it('counts the limit of scans per visitor and link in a minute over two instances together, then none until the next minute', async () => {
    const store = new LocalVisitorWindows(clock);
    const both = [instance(store), instance(store)];
    expect(await run(both, '203.0.113.1', 6)).toEqual([true, true, true, false, false, false]);
    expect(await both[1].counts('4242', '203.0.113.2')).toBe(true); // another visitor
    expect(await both[0].counts('4343', '203.0.113.1')).toBe(true); // another link
    now += 50_000; // the next minute
    expect(await run(both, '203.0.113.1', 4)).toEqual([true, true, true, false]);
  });

  it('keeps its scans apart from the visitor limit of the same link (clicksPerIpPerMinute)', async () => {
    const store = new LocalVisitorWindows(clock);
    const visitors = new SharedVisitorLimit(store, {}, clock);
    for (let i = 0; i < 3; i++) await instance(store).counts('4242', '203.0.113.3');
    expect((await visitors.admit('4242', '203.0.113.3', 1, true)).allowed).toBe(true);
  });

  it("decides in the instance's own window while the shared store fails", async () => {
    const failing: VisitorWindowStore = { hit: () => Promise.reject(new Error('redis down')) };
    expect(await run([instance(failing)], '203.0.113.4', 5)).toEqual([true, true, true, false, false]);
  });

  it('counts every visit as a scan with the limit 0', async () => {
    expect(await run([instance(new LocalVisitorWindows(clock), 0)], '203.0.113.5', 20)).toEqual(Array(20).fill(true));
  });
});
