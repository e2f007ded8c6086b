import type { ClickEvent, ClickEventSource, VisitRow } from '@shortlink/clicks-domain';
import { EARLIEST, MercureHub, MercureUpdate } from './mercure-hub';
import { SHLINK_SELECTORS, TOPIC } from './mercure-token';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

const click = (over: Partial<ClickEvent>): ClickEvent => ({
  producer: 'p',
  seq: 1,
  kind: 'click',
  occurredAt: Date.UTC(2026, 0, 1),
  tenantId: 't1',
  linkId: '1',
  domain: 'sho.rt',
  code: 'abc',
  visitor: 1,
  country: 'DE',
  region: null,
  city: null,
  source: 'link',
  refererHost: null,
  userAgent: CHROME,
  variant: null,
  ...over,
});

describe('MercureHub (Shlink’s real-time updates)', () => {
  let handler: ((batch: { messages: Array<{ event: ClickEvent }> }) => Promise<void>) | null = null;
  const source = { start: jest.fn(async (h) => void (handler = h)), close: jest.fn(async () => undefined), lag: jest.fn() } as unknown as ClickEventSource;
  const reads: string[] = [];
  const payloads = {
    visit: (row: VisitRow, orphan: boolean) => ({ os: row.os, browser: row.browser, orphan, code: row.code }),
    shortUrls: async (tenantId: string, links: ReadonlyArray<{ domain: string; code: string }>) => {
      reads.push(`${tenantId}:${links.map((l) => l.code).join(',')}`);
      return new Map(links.filter((l) => l.code !== 'gone').map((l) => [`${l.domain}/${l.code}`, { shortCode: l.code }]));
    },
  };
  const grant = (tenantId: string, orphanDomains: string[] = []) => ({ tenantId, orphanDomains, subscribe: [...SHLINK_SELECTORS], exp: 0 });
  const deliver = (...events: ClickEvent[]) => handler!({ messages: events.map((event) => ({ event })) });

  it('starts its consumer with the first subscription, and sends each subscriber its own tenant’s visits on the topics it asked for', async () => {
    const hub = new MercureHub(source, payloads, { maxPerTenant: 2 });
    expect(source.start).not.toHaveBeenCalled();
    const all: MercureUpdate[] = [];
    const one: MercureUpdate[] = [];
    const other: MercureUpdate[] = [];
    hub.subscribe(
      grant('t1'),
      [TOPIC.newVisit],
      (u) => all.push(u),
      () => undefined,
    );
    hub.subscribe(
      grant('t1'),
      [TOPIC.newShortUrlVisit('xyz')],
      (u) => one.push(u),
      () => undefined,
    );
    hub.subscribe(
      grant('t2'),
      [TOPIC.newVisit],
      (u) => other.push(u),
      () => undefined,
    );
    expect(source.start).toHaveBeenCalledTimes(1);

    await deliver(click({ code: 'abc' }), click({ code: 'xyz' }), click({ code: 'abc', seq: 2 }), click({ code: 'gone' }), click({ tenantId: 't3' }));
    expect(all.map((u) => (u.data as { shortUrl: { shortCode: string } }).shortUrl.shortCode)).toEqual(['abc', 'xyz', 'abc']);
    expect(all[0].topics).toEqual([TOPIC.newVisit, TOPIC.newShortUrlVisit('abc')]);
    expect(all[0].id).toMatch(/^urn:uuid:/);
    expect(all[0].data).toMatchObject({ visit: { os: 'Windows', browser: 'Chrome', orphan: false } });
    expect(one.map((u) => (u.data as { visit: { code: string } }).visit.code)).toEqual(['xyz']);
    expect(other).toEqual([]);
    // One read of the short URLs per tenant and batch, each link once; none for a tenant nobody listens to.
    expect(reads).toEqual(['t1:abc,xyz,gone']);
  });

  it('sends orphan visits to the subscribers whose token names their domain', async () => {
    const hub = new MercureHub(source, payloads, { maxPerTenant: 2 });
    const operator: MercureUpdate[] = [];
    const tenant: MercureUpdate[] = [];
    hub.subscribe(
      grant('op', ['sho.rt']),
      [TOPIC.newOrphanVisit],
      (u) => operator.push(u),
      () => undefined,
    );
    hub.subscribe(
      grant('t1', []),
      [TOPIC.newOrphanVisit, TOPIC.newVisit],
      (u) => tenant.push(u),
      () => undefined,
    );
    await deliver(click({ kind: 'orphan', tenantId: '', code: 'nope', domain: 'SHO.RT' }));
    expect(operator).toHaveLength(1);
    expect(operator[0]).toMatchObject({ topics: [TOPIC.newOrphanVisit], data: { visit: { orphan: true, code: 'nope' } } });
    expect(tenant).toEqual([]);
  });

  it('replays to a reconnecting subscriber what it missed after its Last-Event-ID (its tenant’s, on its topics), kept while it was away', async () => {
    const hub = new MercureHub(source, payloads, { maxPerTenant: 2 });
    const first: MercureUpdate[] = [];
    const close = hub.subscribe(
      grant('t1'),
      [TOPIC.newVisit],
      (u) => first.push(u),
      () => undefined,
    );
    await deliver(click({ code: 'abc' }));
    expect(first).toHaveLength(1);
    (close as () => void)();
    // While nobody of t1 listens: its visits are still made and kept, another tenant's are not read.
    await deliver(click({ code: 'xyz' }), click({ tenantId: 't2', code: 'other' }), click({ code: 'abc', seq: 2 }));
    expect(reads.at(-1)).toBe('t1:xyz,abc');

    const again: MercureUpdate[] = [];
    const lastId = hub.replay(grant('t1'), [TOPIC.newVisit], first[0].id, (u) => again.push(u));
    expect(again.map((u) => (u.data as { visit: { code: string } }).visit.code)).toEqual(['xyz', 'abc']);
    expect(lastId).toBe(first[0].id);
    // Only the topics asked for; the Last-Event-ID then names the last update it may receive before the first one sent.
    const one: MercureUpdate[] = [];
    expect(hub.replay(grant('t1'), [TOPIC.newShortUrlVisit('abc')], first[0].id, (u) => one.push(u))).toBe(again[0].id);
    expect(one).toEqual([again[1]]);
    // Another tenant gets none of them, and cannot learn an id of theirs.
    const stranger: MercureUpdate[] = [];
    expect(hub.replay(grant('t2'), [TOPIC.newVisit], first[0].id, (u) => stranger.push(u))).toBe(EARLIEST);
    expect(stranger).toEqual([]);
    // An id not kept here (another instance's, too old): nothing replayed, `earliest`; `earliest` asked: everything kept.
    expect(hub.replay(grant('t1'), [TOPIC.newVisit], 'urn:uuid:unknown', () => undefined)).toBe(EARLIEST);
    const all: MercureUpdate[] = [];
    expect(hub.replay(grant('t1'), [TOPIC.newVisit], EARLIEST, (u) => all.push(u))).toBe(EARLIEST);
    expect(all).toHaveLength(3);
  });

  it('keeps at most its history’s size and span', async () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_000_000);
    try {
      const hub = new MercureHub(source, payloads, { maxPerTenant: 2, historySize: 2, historyMs: 60_000 });
      hub.subscribe(
        grant('t1'),
        [TOPIC.newVisit],
        () => undefined,
        () => undefined,
      );
      await deliver(click({ code: 'a' }), click({ code: 'b' }), click({ code: 'c' }));
      const kept: MercureUpdate[] = [];
      hub.replay(grant('t1'), [TOPIC.newVisit], EARLIEST, (u) => kept.push(u));
      expect(kept.map((u) => (u.data as { visit: { code: string } }).visit.code)).toEqual(['b', 'c']);
      now.mockReturnValue(1_000_000 + 60_001);
      const later: MercureUpdate[] = [];
      expect(hub.replay(grant('t1'), [TOPIC.newVisit], kept[0].id, (u) => later.push(u))).toBe(EARLIEST);
      expect(later).toEqual([]);
    } finally {
      now.mockRestore();
    }
  });

  it('limits open subscriptions per tenant, frees a slot on close, and ends them all when it stops', async () => {
    const hub = new MercureHub(source, payloads, { maxPerTenant: 1 });
    const end = jest.fn();
    const close = hub.subscribe(grant('t1'), [TOPIC.newVisit], () => undefined, end);
    expect(close).not.toBe(false);
    expect(hub.subscribe(grant('t1'), [TOPIC.newVisit], () => undefined, end)).toBe(false);
    (close as () => void)();
    const again = hub.subscribe(grant('t1'), [TOPIC.newVisit], () => undefined, end);
    expect(again).not.toBe(false);
    await hub.stop();
    expect(end).toHaveBeenCalledTimes(1);
    expect(new MercureHub(null, payloads, { maxPerTenant: 1 }).available).toBe(false);
  });
});
