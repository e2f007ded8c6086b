import { InProcessClickLog, InProcessConversionLog, MemoryClickEventSink, MemoryClickEventSource } from '@shortlink/bus';
import { ClickEvent, ConversionEvent } from '@shortlink/clicks-domain';
import { UserAgentClassifier } from '@shortlink/visitors-domain';
import { LiveClick, LiveClickHub } from './live-click-hub';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
let seq = 0;
const click = (over: Partial<ClickEvent> = {}): ClickEvent => ({
  producer: 'p1',
  seq: seq++,
  kind: 'click',
  occurredAt: Date.now(),
  tenantId: 't1',
  linkId: '1',
  domain: 'Sho.rt',
  code: 'abc1234',
  visitor: 7,
  country: 'DE',
  region: 'Berlin',
  city: 'Berlin',
  source: 'qr',
  refererHost: 'news.example',
  userAgent: CHROME,
  variant: 1,
  ...over,
});
const conversion = (over: Partial<ConversionEvent> = {}): ConversionEvent => ({
  kind: 'lead',
  id: `cnv_${seq++}`,
  key: 'lead:cus_1',
  tenantId: 't1',
  at: Date.UTC(2026, 11, 7, 21),
  linkId: '1',
  domain: 'Sho.rt',
  code: 'abc1234',
  customerId: 'cus_1',
  eventName: 'Sign up',
  clickId: 'AbCdEfGhIjKlMnOpQrSt_-',
  amount: 0,
  currency: '',
  invoiceId: null,
  metadata: { email: 'kept@out.example' },
  ...over,
});
const until = async (what: () => boolean) => {
  for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!what()) throw new Error('timed out');
};

/** The hub over the in-process click log (the embedded profile's bus), as the wiring builds it. */
describe('LiveClickHub', () => {
  let log: InProcessClickLog;
  let hub: LiveClickHub;
  const options = { replayEvents: 3, replaySeconds: 300, maxPerTenant: 2, instanceId: 'inst1' };

  beforeEach(() => {
    log = new InProcessClickLog({ partitions: 2 });
  });
  afterEach(() => hub?.stop());

  it('starts at the end of the topic, numbers the clicks of each tenant apart, and hands them to the streams of their tenant only', async () => {
    const sink = new MemoryClickEventSink(log);
    await sink.send([click({ code: 'before' })]);
    hub = new LiveClickHub(new MemoryClickEventSource(log, { groupId: 'live.a', fromBeginning: false }), new UserAgentClassifier(), options);
    hub.start();
    await until(() => true);
    const t1: LiveClick[] = [];
    const t2: LiveClick[] = [];
    hub.subscribe(
      't1',
      null,
      (c) => t1.push(c),
      () => undefined,
    );
    hub.subscribe(
      't2',
      null,
      (c) => t2.push(c),
      () => undefined,
    );
    await sink.send([click(), click({ kind: 'orphan', tenantId: '' }), click({ tenantId: 't2', code: 'other' })]);
    await until(() => t1.length === 1 && t2.length === 1);
    expect(t1[0].view).toEqual({
      id: 'inst1.1',
      time: expect.any(String),
      domain: 'sho.rt',
      code: 'abc1234',
      country: 'DE',
      region: 'Berlin',
      city: 'Berlin',
      referer: 'news.example',
      device: 'desktop',
      browser: 'Chrome',
      os: 'Windows',
      bot: false,
      variant: 1,
      source: 'qr',
      visitor: '7',
    });
    // t2's first click is its 1, whatever other tenants clicked before: an id tells nothing of their volume.
    expect(t2.map((c) => [c.view.id, c.code])).toEqual([['inst1.1', 'other']]);
    await sink.send([click({ tenantId: 't2' }), click({ tenantId: 't2' }), click({ tenantId: 't2' }), click()]);
    await until(() => t1.length === 2 && t2.length === 4);
    expect(t1.map((c) => c.view.id)).toEqual(['inst1.1', 'inst1.2']);
    expect(t2.map((c) => c.view.id)).toEqual(['inst1.1', 'inst1.2', 'inst1.3', 'inst1.4']);
  });

  it('replays after a Last-Event-ID the clicks of the tenant held in the window; older or foreign ids get a gap', () => {
    hub = new LiveClickHub(new MemoryClickEventSource(log, { groupId: 'live.b' }), new UserAgentClassifier(), options);
    const deliver = (...events: ClickEvent[]) => hub.accept({ messages: events.map((event) => ({ partition: 0, offset: '0', recordedAt: 0, event })) });
    deliver(click({ code: 'c1' }), click({ code: 'c2' }), click({ code: 'x', tenantId: 't2' }), click({ code: 'c3' }));
    const ids = (r: { replay: readonly LiveClick[] }) => r.replay.map((c) => `${c.view.id}:${c.code}`);
    const resume = (id: string | null, tenant = 't1') => {
      const s = hub.subscribe(
        tenant,
        id === null ? null : { instanceId: id.split('.')[0], seq: Number(id.split('.')[1]) },
        () => undefined,
        () => undefined,
      );
      s.close();
      return s;
    };
    // t1's clicks are its 1, 2 and 3, t2's x its 1. The window holds the last 3 of the instance: c2, x and c3.
    const fromTwo = resume('inst1.2');
    expect({ ids: ids(fromTwo), gap: fromTwo.gap }).toEqual({ ids: ['inst1.3:c3'], gap: null });
    const fromOne = resume('inst1.1');
    expect({ ids: ids(fromOne), gap: fromOne.gap }).toEqual({ ids: ['inst1.2:c2', 'inst1.3:c3'], gap: null });
    // t2 saw its only click: nothing missed, and nothing of t1's.
    expect(resume('inst1.1', 't2')).toMatchObject({ replay: [], gap: null });
    deliver(click({ code: 'c5' }));
    const expired = resume('inst1.1');
    expect({ ids: ids(expired), gap: expired.gap }).toEqual({ ids: ['inst1.3:c3', 'inst1.4:c5'], gap: 'expired' });
    expect({ ...resume('other.1'), close: undefined }).toEqual({ replay: [], gap: 'unknown', close: undefined });
    expect(resume('inst1.99').gap).toBe('unknown');
    // An id beyond the tenant's own count is no id of its own (another tenant's, or a guess): unknown.
    expect(resume('inst1.2', 't2').gap).toBe('unknown');
    expect(resume('inst1.4')).toMatchObject({ replay: [], gap: null });
    expect(resume(null)).toMatchObject({ replay: [], gap: null });
    // Every click of the tenant since its id dropped out of the window: all missed, told as expired.
    for (const code of ['y1', 'y2', 'y3']) deliver(click({ code, tenantId: 't2' }));
    expect(resume('inst1.3')).toMatchObject({ replay: [], gap: 'expired' });
  });

  it('refuses a stream past the limit of the tenant with STREAM_LIMIT_REACHED, and frees the slot on close', () => {
    hub = new LiveClickHub(new MemoryClickEventSource(log, { groupId: 'live.c' }), new UserAgentClassifier(), options);
    const open = (tenant: string) =>
      hub.subscribe(
        tenant,
        null,
        () => undefined,
        () => undefined,
      );
    const first = open('t1');
    open('t1');
    expect(() => open('t1')).toThrow(expect.objectContaining({ code: 'STREAM_LIMIT_REACHED' }));
    open('t2');
    first.close();
    first.close(); // idempotent
    expect(hub.openStreams('t1')).toBe(1);
    open('t1');
    expect(hub.openStreams('t1')).toBe(2);
  });

  it('starts its consumer again after a start that failed (brokers down at boot), saying so, until stopped', async () => {
    let attempts = 0;
    const messages: string[] = [];
    const source = new MemoryClickEventSource(log, { groupId: 'live.e', fromBeginning: false });
    const flaky = {
      start: (handler: Parameters<MemoryClickEventSource['start']>[0]) => (++attempts < 3 ? Promise.reject(new Error('brokers down')) : source.start(handler)),
      lag: () => source.lag(),
      close: () => source.close(),
    };
    hub = new LiveClickHub(flaky, new UserAgentClassifier(), { ...options, restartMs: 10, onError: (m) => messages.push(m) });
    hub.start();
    await until(() => attempts === 3);
    const seen: LiveClick[] = [];
    hub.subscribe(
      't1',
      null,
      (c) => seen.push(c),
      () => undefined,
    );
    await new MemoryClickEventSink(log).send([click()]);
    await until(() => seen.length === 1);
    expect(messages).toEqual([expect.stringContaining('brokers down'), expect.stringContaining('brokers down')]);
  });

  it("streams the tenant's leads and sales from the conversions topic in its own sequence, each event key once, never the metadata", async () => {
    const conversions = new InProcessConversionLog();
    hub = new LiveClickHub(
      new MemoryClickEventSource(log, { groupId: 'live.f', fromBeginning: false }),
      new UserAgentClassifier(),
      options,
      conversions.liveSource(),
    );
    await conversions.sink.send([conversion({ customerId: 'before', key: 'lead:before' })]);
    hub.start();
    await until(() => true);
    const t1: LiveClick[] = [];
    const t2: LiveClick[] = [];
    hub.subscribe(
      't1',
      null,
      (c) => t1.push(c),
      () => undefined,
    );
    hub.subscribe(
      't2',
      null,
      (c) => t2.push(c),
      () => undefined,
    );
    const lead = conversion();
    const sale = conversion({ kind: 'sale', key: 'invoice:in_1', amount: 4900, currency: 'EUR', invoiceId: 'in_1', eventName: 'Purchase' });
    await new MemoryClickEventSink(log).send([click()]);
    await until(() => t1.length === 1);
    // The sale resent (a retry whose first send landed): streamed once, as it is counted once.
    await conversions.sink.send([lead, sale, { ...sale, id: 'cnv_resent' }, conversion({ tenantId: 't2', code: 'other' })]);
    await until(() => t1.length === 3 && t2.length === 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(t1.map((e) => [e.kind, e.view.id])).toEqual([
      ['click', 'inst1.1'],
      ['lead', 'inst1.2'],
      ['sale', 'inst1.3'],
    ]);
    expect(t1[1].view).toEqual({
      id: 'inst1.2',
      time: '2026-12-07T21:00:00.000Z',
      domain: 'sho.rt',
      code: 'abc1234',
      conversionId: lead.id,
      eventName: 'Sign up',
      customerId: 'cus_1',
      clickId: 'AbCdEfGhIjKlMnOpQrSt_-',
    });
    expect(t1[2].view).toMatchObject({ id: 'inst1.3', conversionId: sale.id, eventName: 'Purchase', amount: 4900, currency: 'EUR', invoiceId: 'in_1' });
    expect(t1[2]).toMatchObject({ linkId: '1', domain: 'sho.rt', code: 'abc1234', bot: false });
    expect(t2.map((e) => [e.kind, e.view.id, e.code])).toEqual([['lead', 'inst1.1', 'other']]);
    expect(JSON.stringify(t1.map((e) => e.view))).not.toContain('kept@out.example');
    expect([hub.streamedClicks, hub.streamedConversions]).toEqual([1, 3]);
    // They are in the replay window with the clicks: a resume after the click gets the lead and the sale.
    const resumed = hub.subscribe(
      't1',
      { instanceId: 'inst1', seq: 1 },
      () => undefined,
      () => undefined,
    );
    expect(resumed.replay.map((e) => e.kind)).toEqual(['lead', 'sale']);
  });

  it('ends every open stream when it stops', async () => {
    hub = new LiveClickHub(new MemoryClickEventSource(log, { groupId: 'live.d' }), new UserAgentClassifier(), options);
    hub.start();
    let ended = 0;
    hub.subscribe(
      't1',
      null,
      () => undefined,
      () => ended++,
    );
    hub.subscribe(
      't2',
      null,
      () => undefined,
      () => ended++,
    );
    await hub.stop();
    expect(ended).toBe(2);
  });
});
