import { ClickEvent } from './click-event';
import { countedOf } from './testing/counted-clicks';
import { producerKeyOf, visitColumnsOf, visitIdOf, visitRowAt, visitsOf, writeVisitId } from './visits';

const STEP = 0x9e3779b97f4a7c15n;
const MASK = (1n << 64n) - 1n;

describe('visit ids', () => {
  it('are key(producer) + seq × 0x9E3779B97F4A7C15 mod 2^64, exactly, at the edges of 32 and 53 bits', () => {
    const key = producerKeyOf('redirect-7f3a');
    const keyValue = (BigInt(key[0]) << 32n) | BigInt(key[1]);
    const high = new Uint32Array(1);
    const low = new Uint32Array(1);
    for (const seq of [0, 1, 2, 0xffff_ffff, 2 ** 32, 2 ** 32 + 1, 2 ** 40 + 12345, Number.MAX_SAFE_INTEGER]) {
      writeVisitId(key, seq, high, low, 0);
      expect([seq, (BigInt(high[0]) << 32n) | BigInt(low[0])]).toEqual([seq, (keyValue + BigInt(seq) * STEP) & MASK]);
    }
  });

  it('differ for every seq of a producer and between producers, and are the same every time', () => {
    const ids = new Set<string>();
    for (const producer of ['a', 'b', 'c']) for (let seq = 0; seq < 2000; seq++) ids.add(visitIdOf({ producer, seq }));
    expect(ids.size).toBe(6000);
    expect(visitIdOf({ producer: 'a', seq: 42 })).toBe(visitIdOf({ producer: 'a', seq: 42 }));
    expect(visitIdOf({ producer: 'a', seq: 42 })).toMatch(/^\d{1,20}$/);
  });
});

describe('visitsOf', () => {
  it('copies each counted click into visit columns: every fact, its id, an orphan under no tenant', () => {
    const base: ClickEvent = {
      producer: 'p9',
      seq: 5,
      kind: 'click',
      occurredAt: 1_800_000_000_123,
      tenantId: 't1',
      linkId: '77',
      domain: 'sho.rt',
      code: 'abc',
      visitor: 2 ** 52 - 1,
      country: 'US',
      region: 'Illinois',
      city: 'Springfield',
      source: 'qr',
      refererHost: 'news.example',
      userAgent: 'UA',
      variant: 3,
    };
    const orphan: ClickEvent = {
      ...base,
      seq: 6,
      kind: 'orphan',
      tenantId: '',
      linkId: '',
      country: null,
      region: null,
      city: null,
      source: 'link',
      refererHost: null,
      variant: null,
    };
    const visits = visitsOf(countedOf([base, orphan], { device: 'mobile', browser: 'Safari', os: 'iOS', bot: true }));
    expect(visits.length).toBe(2);
    expect(visitRowAt(visits, 0)).toEqual({
      id: visitIdOf(base),
      time: base.occurredAt,
      tenantId: 't1',
      domain: 'sho.rt',
      code: 'abc',
      linkId: '77',
      country: 'US',
      region: 'Illinois',
      city: 'Springfield',
      refererHost: 'news.example',
      device: 'mobile',
      browser: 'Safari',
      os: 'iOS',
      variant: 3,
      source: 'qr',
      bot: true,
      visitor: 2 ** 52 - 1,
      producer: 'p9',
      seq: 5,
    });
    expect(visitRowAt(visits, 1)).toMatchObject({ tenantId: '', country: null, refererHost: null, variant: null, source: 'link', seq: 6 });
    // Objects in, the same objects out.
    const again = visitColumnsOf([visitRowAt(visits, 0), visitRowAt(visits, 1)]);
    expect([visitRowAt(again, 0), visitRowAt(again, 1)]).toEqual([visitRowAt(visits, 0), visitRowAt(visits, 1)]);
  });
});
