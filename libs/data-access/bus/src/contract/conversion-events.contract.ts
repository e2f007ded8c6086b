import { randomUUID } from 'crypto';
import type { ConversionBatch, ConversionEvent, ConversionEventSink, ConversionEventSource } from '@shortlink/clicks-domain';

export interface ConversionBusFixture {
  readonly sink: ConversionEventSink;
  /** A fresh member of the consumer group (a restart): it starts where the group committed. */
  source(): ConversionEventSource;
  /** A live reader of an instance's own (the live stream's): from the end, committing nothing. */
  liveSource(): ConversionEventSource;
  close(): Promise<void>;
}

const anEvent = (customerId: string, over: Partial<ConversionEvent> = {}): ConversionEvent => ({
  kind: 'lead',
  id: `cnv_${randomUUID()}`,
  key: `lead:${customerId}`,
  tenantId: 't-bus',
  at: Date.UTC(2026, 11, 7),
  linkId: '42',
  domain: 'sho.rt',
  code: 'abc1234',
  customerId,
  eventName: 'Sign up ✓',
  clickId: 'AbCdEfGhIjKlMnOpQrSt_-',
  amount: 0,
  currency: '',
  invoiceId: null,
  metadata: { plan: 'pro' },
  ...over,
});

const until = async (done: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** The conversions topic's contract (docs/analytics.md, "Conversions"): the in-process log and Kafka alike. */
export function describeConversionBusContract(name: string, open: () => Promise<ConversionBusFixture>): void {
  describe(`conversion bus contract: ${name}`, () => {
    let f: ConversionBusFixture;
    beforeAll(async () => {
      f = await open();
    }, 60_000);
    afterAll(() => f?.close());

    it('delivers what was sent, with its source, partition and rising offsets; a batch whose handler failed comes again; a customer’s events keep their order', async () => {
      const got: ConversionBatch[] = [];
      let failures = 1;
      const source = f.source();
      await source.start(async (batch) => {
        if (failures-- > 0) throw new Error('store down');
        got.push(batch);
      });
      const sale = anEvent('cus_1', { kind: 'sale', key: 'invoice:i1', amount: -900, currency: 'EUR', invoiceId: 'i1' });
      await f.sink.send([anEvent('cus_1'), sale, anEvent('cus_2')]);
      await until(() => got.flatMap((b) => b.messages).length >= 3);
      const messages = got.flatMap((b) => b.messages);
      expect(messages.map((m) => m.event).sort((a, b) => a.customerId.localeCompare(b.customerId) || a.kind.localeCompare(b.kind))).toEqual(
        [anEvent('cus_1'), sale, anEvent('cus_2')]
          .map((e) => ({ ...e, id: expect.any(String) }))
          .sort((a, b) => a.customerId.localeCompare(b.customerId) || a.kind.localeCompare(b.kind)),
      );
      const ofCustomer = messages.filter((m) => m.event.customerId === 'cus_1');
      expect(ofCustomer.map((m) => m.event.kind)).toEqual(['lead', 'sale']);
      for (const b of got) {
        expect(b.source).toMatch(/^(kafka|memory):/);
        const offsets = b.messages.map((m) => BigInt(m.offset));
        expect([...offsets].sort((x, y) => (x < y ? -1 : 1))).toEqual(offsets);
      }
      await source.close();
    }, 60_000);

    it('gives each live reader the events sent from its start on (not those before), beside the others: every instance streams every event', async () => {
      await f.sink.send([anEvent('before-live', { tenantId: 't-live' })]);
      const seen = [[], []] as [ConversionEvent[], ConversionEvent[]];
      const readers = [f.liveSource(), f.liveSource()];
      for (const [i, reader] of readers.entries()) await reader.start(async (batch) => void seen[i].push(...batch.messages.map((m) => m.event)));
      // A Kafka reader starts at the end once its group joined: send until both read.
      for (let i = 0; !seen.every((s) => s.some((e) => e.customerId.startsWith('probe-'))); i++) {
        if (i > 100) throw new Error('the live readers never read');
        await f.sink.send([anEvent(`probe-${i}`, { tenantId: 't-live' })]);
        await new Promise((r) => setTimeout(r, 200));
      }
      const sale = anEvent('cus_live', { tenantId: 't-live', kind: 'sale', key: 'invoice:live', amount: 4900, currency: 'EUR', invoiceId: 'live' });
      await f.sink.send([anEvent('cus_live', { tenantId: 't-live' }), sale]);
      await until(() => seen.every((s) => s.filter((e) => e.customerId === 'cus_live').length === 2));
      for (const s of seen) {
        expect(s.filter((e) => e.customerId === 'cus_live').map((e) => e.kind)).toEqual(['lead', 'sale']);
        expect(s.some((e) => e.customerId === 'before-live')).toBe(false);
      }
      for (const reader of readers) await reader.close();
    }, 60_000);
  });
}
