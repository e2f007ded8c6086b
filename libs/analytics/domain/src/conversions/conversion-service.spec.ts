import { DomainError, ErrorCode } from '@shortlink/core';
import { ClickIds } from '../click-id';
import { ConversionEvent } from './conversion';
import { ConversionService } from './conversion-service';
import { InMemoryConversionStore } from './in-memory-conversion-store';

describe('ConversionService (docs/analytics.md, "Conversions")', () => {
  const now = Date.UTC(2026, 11, 7, 12, 0, 0);
  const clickIds = new ClickIds('c'.repeat(40));
  const links = new Map([
    ['41', { tenantId: 't1', domain: 'sho.rt', code: 'abc1234' }],
    ['42', { tenantId: 't2', domain: 'sho.rt', code: 'other12' }],
  ]);

  function setup() {
    const store = new InMemoryConversionStore();
    const sent: ConversionEvent[] = [];
    const observed: ConversionEvent[] = [];
    let failing = false;
    const sink = {
      send: async (events: readonly ConversionEvent[]) => {
        if (failing) throw new Error('bus down');
        sent.push(...events);
      },
      close: async () => undefined,
    };
    const service = new ConversionService(
      { store, sink, links: { linkById: async (id) => links.get(id) ?? null }, clickIds, observer: (e) => observed.push(e) },
      { clickIdTtlDays: 90, maxMetadataBytes: 256 },
      { now: () => now },
    );
    return { service, sent, observed, fail: (v: boolean) => (failing = v) };
  }

  it('a lead goes to its click id’s link, once per customer; a sale to the customer’s first lead, once per invoice id', async () => {
    const { service, sent, observed } = setup();
    const clickId = clickIds.issue('41', now - 3_600_000)!;
    const lead = await service.lead('t1', { clickId, eventName: 'Sign up', customerId: 'cus_1', metadata: { plan: 'pro' } });
    expect(lead.duplicate).toBe(false);
    expect(lead.event).toMatchObject({ kind: 'lead', key: 'lead:cus_1', linkId: '41', domain: 'sho.rt', code: 'abc1234', clickId, metadata: { plan: 'pro' } });
    // The click's minute, where the consumer finds its visit (and dimensions).
    expect(lead.event?.clickAt).toBe(Math.floor((now - 3_600_000) / 60_000) * 60_000);
    expect(await service.lead('t1', { clickId: clickIds.issue('41', now)!, eventName: 'Sign up', customerId: 'cus_1' })).toEqual({
      duplicate: true,
      event: null,
    });
    const sale = await service.sale('t1', { customerId: 'cus_1', amount: 4900, currency: 'eur', eventName: 'Purchase', invoiceId: 'inv_1' });
    expect(sale.event).toMatchObject({ kind: 'sale', key: 'invoice:inv_1', code: 'abc1234', amount: 4900, currency: 'EUR', invoiceId: 'inv_1' });
    expect(sale.event?.clickAt).toBe(lead.event?.clickAt);
    expect(await service.sale('t1', { customerId: 'cus_1', amount: 4900, currency: 'EUR', eventName: 'Purchase', invoiceId: 'inv_1' })).toEqual({
      duplicate: true,
      event: null,
    });
    // Without an invoice id every call is a sale of its own; a refund is a negative amount.
    const refund = await service.sale('t1', { customerId: 'cus_1', amount: -900, currency: 'EUR', eventName: 'Refund' });
    expect(refund.event?.key).toMatch(/^sale:cnv_/);
    expect(sent.map((e) => e.kind)).toEqual(['lead', 'sale', 'sale']);
    expect(observed).toEqual(sent);
  });

  it('answers 404 CLICK_ID_NOT_FOUND for a made-up, expired or another tenant’s click id, and CUSTOMER_NOT_FOUND for a sale without a lead; nothing is stored', async () => {
    const { service, sent } = setup();
    const notFound = { code: 'CLICK_ID_NOT_FOUND' };
    for (const clickId of [
      'nope',
      'A'.repeat(22),
      new ClickIds('x'.repeat(40)).issue('41', now)!,
      clickIds.issue('41', now - 91 * 86_400_000)!,
      clickIds.issue('42', now)!,
      clickIds.issue('99', now)!,
    ])
      await expect(service.lead('t1', { clickId, eventName: 'Sign up', customerId: 'cus_x' })).rejects.toMatchObject(notFound);
    await expect(service.sale('t1', { customerId: 'cus_x', amount: 1, currency: 'EUR', eventName: 'Purchase' })).rejects.toMatchObject({
      code: 'CUSTOMER_NOT_FOUND',
    });
    expect(sent).toEqual([]);
  });

  it('refuses bad input with VALIDATION_FAILED naming the field', async () => {
    const { service } = setup();
    const clickId = clickIds.issue('41', now)!;
    await service.lead('t1', { clickId, eventName: 'Sign up', customerId: 'cus_v' });
    const lead = { clickId, eventName: 'Sign up', customerId: 'c' };
    const sale = { customerId: 'cus_v', amount: 100, currency: 'EUR', eventName: 'Purchase' };
    for (const [body, field] of [
      [null, 'body'],
      [{ ...lead, clickId: undefined }, 'clickId'],
      [{ ...lead, eventName: '' }, 'eventName'],
      [{ ...lead, customerId: 'x'.repeat(101) }, 'customerId'],
      [{ ...lead, metadata: [1] }, 'metadata'],
      [{ ...lead, metadata: { big: 'x'.repeat(300) } }, 'metadata'],
    ] as const)
      await expect(service.lead('t1', body)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field } });
    for (const [body, field] of [
      [{ ...sale, amount: 1.5 }, 'amount'],
      [{ ...sale, amount: '100' }, 'amount'],
      [{ ...sale, currency: 'EUO' }, 'currency'],
      [{ ...sale, currency: undefined }, 'currency'],
      [{ ...sale, invoiceId: '' }, 'invoiceId'],
    ] as const)
      await expect(service.sale('t1', body)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field } });
  });

  it('a send the bus refuses answers 503 and gives the customer and the invoice back, so that the retry counts', async () => {
    const { service, sent, fail } = setup();
    const clickId = clickIds.issue('41', now)!;
    fail(true);
    await expect(service.lead('t1', { clickId, eventName: 'Sign up', customerId: 'cus_r' })).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    fail(false);
    expect((await service.lead('t1', { clickId, eventName: 'Sign up', customerId: 'cus_r' })).duplicate).toBe(false);
    fail(true);
    const sale = { customerId: 'cus_r', amount: 100, currency: 'USD', eventName: 'Purchase', invoiceId: 'inv_r' };
    await expect(service.sale('t1', sale)).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    fail(false);
    expect((await service.sale('t1', sale)).duplicate).toBe(false);
    expect(sent.map((e) => e.kind)).toEqual(['lead', 'sale']);
  });

  it('asks the plan to admit each new event only (a duplicate is free); refused, nothing is kept and the retry counts; the plan’s metadata bytes apply', async () => {
    const { service, sent } = setup();
    let left = 2;
    const caps = {
      maxMetadataBytes: 20,
      admit: async () => {
        if (left-- <= 0) throw new DomainError(ErrorCode.CONVERSION_LIMIT_REACHED, 'no more this month', { retryAfterSeconds: 60 });
      },
    };
    const clickId = clickIds.issue('41', now)!;
    await expect(service.lead('t1', { clickId, eventName: 'Sign up', customerId: 'cus_q', metadata: { x: 'y'.repeat(30) } }, caps)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { field: 'metadata' },
    });
    expect((await service.lead('t1', { clickId, eventName: 'Sign up', customerId: 'cus_q' }, caps)).duplicate).toBe(false);
    expect((await service.lead('t1', { clickId, eventName: 'Sign up', customerId: 'cus_q' }, caps)).duplicate).toBe(true);
    const sale = { customerId: 'cus_q', amount: 100, currency: 'USD', eventName: 'Purchase', invoiceId: 'inv_q' };
    expect((await service.sale('t1', sale, caps)).duplicate).toBe(false);
    expect((await service.sale('t1', sale, caps)).duplicate).toBe(true);
    // The plan's month is used up: refused, and the invoice and the customer are given back.
    await expect(service.sale('t1', { ...sale, invoiceId: 'inv_q2' }, caps)).rejects.toMatchObject({ code: 'CONVERSION_LIMIT_REACHED' });
    await expect(service.lead('t1', { clickId, eventName: 'Sign up', customerId: 'cus_q2' }, caps)).rejects.toMatchObject({ code: 'CONVERSION_LIMIT_REACHED' });
    left = 2;
    expect((await service.sale('t1', { ...sale, invoiceId: 'inv_q2' }, caps)).duplicate).toBe(false);
    expect((await service.lead('t1', { clickId, eventName: 'Sign up', customerId: 'cus_q2' }, caps)).duplicate).toBe(false);
    expect(sent.map((e) => e.kind)).toEqual(['lead', 'sale', 'sale', 'lead']);
  });

  it('with last touch (the tenant’s setting), a newer click of a known customer takes its later sales; an older one, or first touch, does not', async () => {
    const { service, sent } = setup();
    links.set('43', { tenantId: 't1', domain: 'sho.rt', code: 'later12' });
    expect(await service.settings('t1')).toEqual({ attribution: 'first' });
    await expect(service.configure('t1', { attribution: 'middle' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'attribution' } });
    const early = clickIds.issue('41', now - 3_600_000)!;
    const late = clickIds.issue('43', now - 60_000)!;
    await service.lead('t1', { clickId: early, eventName: 'Sign up', customerId: 'cus_t' });
    // First touch: the later click changes nothing.
    expect((await service.lead('t1', { clickId: late, eventName: 'Sign up', customerId: 'cus_t' })).duplicate).toBe(true);
    expect((await service.sale('t1', { customerId: 'cus_t', amount: 1, currency: 'EUR', eventName: 'P' })).event?.code).toBe('abc1234');
    expect(await service.configure('t1', { attribution: 'last' })).toEqual({ attribution: 'last' });
    expect((await service.lead('t1', { clickId: late, eventName: 'Sign up', customerId: 'cus_t' })).duplicate).toBe(true);
    expect((await service.sale('t1', { customerId: 'cus_t', amount: 2, currency: 'EUR', eventName: 'P' })).event?.code).toBe('later12');
    // An older click reported late does not take it back.
    await service.lead('t1', { clickId: early, eventName: 'Sign up', customerId: 'cus_t' });
    expect((await service.sale('t1', { customerId: 'cus_t', amount: 3, currency: 'EUR', eventName: 'P' })).event?.code).toBe('later12');
    expect(sent.filter((e) => e.kind === 'lead')).toHaveLength(1);
  });

  it('asks the links’ repository for a link at most once per 10 s (a campaign’s leads name few links, and each lookup asks every shard)', async () => {
    let clock = now;
    const asked: string[] = [];
    const service = new ConversionService(
      {
        store: new InMemoryConversionStore(),
        sink: { send: async () => undefined, close: async () => undefined },
        links: { linkById: async (id) => (asked.push(id), links.get(id) ?? null) },
        clickIds,
      },
      { clickIdTtlDays: 90, maxMetadataBytes: 256 },
      { now: () => clock },
    );
    const lead = (customerId: string) => service.lead('t1', { clickId: clickIds.issue('41', now)!, eventName: 'Sign up', customerId });
    await lead('c1');
    await lead('c2');
    expect(asked).toEqual(['41']);
    clock += 10_000;
    await lead('c3');
    expect(asked).toEqual(['41', '41']);
    // Another tenant's link is refused from the cache as from the repository.
    await expect(service.lead('t2', { clickId: clickIds.issue('41', now)!, eventName: 'Sign up', customerId: 'x' })).rejects.toMatchObject({
      code: ErrorCode.CLICK_ID_NOT_FOUND,
    });
    expect(asked).toHaveLength(2);
  });
});
