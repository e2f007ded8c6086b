import type {
  ClickAggregateStore,
  ConsumerProgress,
  ConversionBatch,
  ConversionDimensions,
  ConversionEvent,
  ConversionRow,
  ConvertedClick,
} from '@shortlink/clicks-domain';
import { ConversionConsumer } from './conversion-consumer';

/** The store as the consumer uses it: rows, progress, the table's ledger; `failWrites` fails the next inserts after they landed (a lost answer). */
class FakeStore {
  readonly rows: ConversionRow[] = [];
  readonly progress = new Map<string, bigint>();
  failAfterWrite = 0;
  failCommit = 0;
  /** The clicks' visits by click id, as the raw visits hold them now; `looks` counts the lookups. */
  readonly visits = new Map<string, ConversionDimensions>();
  readonly looks: string[][] = [];

  async clickDimensions(clicks: readonly ConvertedClick[]) {
    this.looks.push(clicks.map((c) => c.clickId));
    return new Map(clicks.filter((c) => this.visits.has(c.clickId)).map((c) => [c.clickId, this.visits.get(c.clickId)!]));
  }

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
const consumerOf = (store: FakeStore, options?: ConstructorParameters<typeof ConversionConsumer>[3]) =>
  new ConversionConsumer(
    store as unknown as ClickAggregateStore,
    { start: async () => undefined, close: async () => undefined },
    { warn: () => undefined, log: () => undefined },
    options,
  );
const dims = (country: string): ConversionDimensions => ({
  country,
  region: '',
  city: '',
  referer: '',
  device: 'mobile',
  browser: 'Chrome',
  os: 'Android',
  variant: '1',
  source: 'link',
});

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

  it('copies each row’s click dimensions from its visit; waits (growing pauses, up to the configured wait) for a recent click’s visit, not for an old one (docs/design.md, "Conversions")', async () => {
    const store = new FakeStore();
    let now = 10 * 3_600_000;
    const slept: number[] = [];
    const consumer = consumerOf(store, {
      dimensionsWaitMs: 5000,
      now: () => now,
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
        // The click's visit lands while the batch waits (its click path is slower than the lead's).
        if (slept.length === 2) store.visits.set('recent', dims('DE'));
      },
    });
    store.visits.set('known', dims('FR'));
    const messages = [
      { offset: '0', event: { ...event(0), clickId: 'recent', clickAt: now - 60_000 } },
      { offset: '1', event: { ...event(1), clickId: 'known', clickAt: now - 86_400_000 } },
      { offset: '2', event: { ...event(2), key: 'k2', clickId: 'old', clickAt: now - 86_400_000 } },
      { offset: '3', event: { ...event(3), clickId: 'recent', clickAt: now - 60_000 } },
    ];
    await consumer.handle({ source: 'kafka:conv', partition: 0, messages });
    expect(store.rows.map((r) => r.dims?.country)).toEqual(['DE', 'FR', undefined, 'DE']);
    expect(slept).toEqual([200, 400]);
    // One look for every click of the batch, then only the recent one not found (the old one is not waited for).
    expect(store.looks).toEqual([['recent', 'known', 'old'], ['recent'], ['recent']]);

    // A recent click never found: the batch waits the configured time at most, then counts it with unknown dimensions.
    slept.length = 0;
    await consumer.handle({ source: 'kafka:conv', partition: 0, messages: [{ offset: '4', event: { ...event(4), clickId: 'lost', clickAt: now } }] });
    expect(slept.reduce((a, b) => a + b, 0)).toBe(5000);
    expect(store.rows[4].dims).toBeUndefined();
  });
});
