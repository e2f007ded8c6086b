import type { ClickAggregateStore, ConsumerProgress, ConversionBatch, ConversionEvent, ConversionRow } from '@shortlink/clicks-domain';
import { ConversionConsumer } from './conversion-consumer';

/** The store as the consumer uses it: rows, progress, the table's ledger; `failWrites` fails the next inserts after they landed (a lost answer). */
class FakeStore {
  readonly rows: ConversionRow[] = [];
  readonly progress = new Map<string, bigint>();
  failAfterWrite = 0;
  failCommit = 0;

  async writeConversions(rows: readonly ConversionRow[]) {
    this.rows.push(...rows);
    if (this.failAfterWrite > 0 && this.failAfterWrite--) throw new Error('server gone after the insert');
  }
  async commit(p: ConsumerProgress) {
    if (this.failCommit > 0 && this.failCommit--) throw new Error('commit failed');
    this.progress.set(`${p.source}/${p.partition}`, BigInt(p.lastOffset));
  }
  async ingestedOffsets(source: string) {
    return new Map([...this.progress].filter(([k]) => k.startsWith(`${source}/`)).map(([k, v]) => [Number(k.split('/').pop()), v]));
  }
  async conversionsThrough(source: string, partition: number) {
    const mine = this.rows.filter((r) => r.source === source && r.partition === partition).map((r) => BigInt(r.offset));
    return mine.length ? mine.reduce((a, b) => (a > b ? a : b)) : undefined;
  }
}

const event = (n: number): ConversionEvent => ({
  kind: n % 2 ? 'sale' : 'lead',
  id: `cnv_${n}`,
  key: `k${n}`,
  tenantId: 't1',
  at: 0,
  linkId: '1',
  domain: 'sho.rt',
  code: 'abc',
  customerId: `c${n}`,
  eventName: 'e',
  clickId: 'x',
  amount: 0,
  currency: '',
  invoiceId: null,
  metadata: null,
});
const batch = (from: number, to: number, source = 'kafka:conv', partition = 0): ConversionBatch => ({
  source,
  partition,
  messages: Array.from({ length: to - from + 1 }, (_, i) => ({ offset: String(from + i), event: event(from + i) })),
});
const consumerOf = (store: FakeStore) =>
  new ConversionConsumer(
    store as unknown as ClickAggregateStore,
    { start: async () => undefined, close: async () => undefined },
    { warn: () => undefined, log: () => undefined },
  );

describe('ConversionConsumer (docs/analytics.md, "Conversions")', () => {
  it('writes each batch once and commits its progress; a replay below the progress writes nothing, a new member reads the progress first', async () => {
    const store = new FakeStore();
    const consumer = consumerOf(store);
    await consumer.handle(batch(0, 2));
    await consumer.handle(batch(0, 4)); // redelivered from 0 after a rebalance: only 3 and 4 are new
    expect(store.rows.map((r) => r.offset)).toEqual(['0', '1', '2', '3', '4']);
    expect(store.progress.get('kafka:conv/0')).toBe(4n);
    await consumerOf(store).handle(batch(2, 5));
    expect(store.rows.map((r) => r.offset)).toEqual(['0', '1', '2', '3', '4', '5']);
  });

  it('after an insert that landed but was not acknowledged (the commit never came), the table’s ledger keeps the retry from writing it again', async () => {
    const store = new FakeStore();
    store.failAfterWrite = 1;
    const consumer = consumerOf(store);
    await expect(consumer.handle(batch(0, 2))).rejects.toThrow();
    expect(store.progress.size).toBe(0);
    await consumerOf(store).handle(batch(0, 3));
    expect(store.rows.map((r) => r.offset)).toEqual(['0', '1', '2', '3']);
  });

  it('keeps partitions and sources apart', async () => {
    const store = new FakeStore();
    const consumer = consumerOf(store);
    await consumer.handle(batch(0, 1, 'kafka:conv', 0));
    await consumer.handle(batch(0, 1, 'kafka:conv', 1));
    await consumer.handle(batch(0, 0, 'memory:x', 0));
    expect(store.rows).toHaveLength(5);
  });
});
