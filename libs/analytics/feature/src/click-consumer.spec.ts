import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Registry } from 'prom-client';
import { ClickBatch, ClickEvent, ClickWrite, DeliveredClick } from '@shortlink/clicks-domain';
import { UserAgentClassifier } from '@shortlink/visitors-domain';
import { ChdbExecutor, SqlClickAggregateStore } from '@shortlink/olap';
import pino from 'pino';
import { PinoNestLogger } from '@shortlink/nest-platform';
import { ClickConsumer } from './click-consumer';

const silent = new PinoNestLogger(pino({ level: 'silent' }));

// chdb maps a ~150 MB engine on first use: under a busy unit tier (parallel workers, 2 cores) that alone can take seconds.
jest.setTimeout(60_000);

const NOW = Date.UTC(2026, 11, 3, 12, 0, 30);
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

let seq = 0;
const click = (over: Partial<ClickEvent> = {}): ClickEvent => ({
  producer: 'p1',
  seq: seq++,
  kind: 'click',
  occurredAt: NOW - 1000,
  tenantId: 't1',
  linkId: '1',
  domain: 'sho.rt',
  code: 'abc1234',
  visitor: 7,
  country: 'DE',
  region: null,
  city: null,
  source: 'link',
  refererHost: null,
  userAgent: CHROME,
  variant: null,
  ...over,
});
/** The events of one record at `offset`, which entered the log at NOW. */
const at = (offset: number, ...events: ClickEvent[]): DeliveredClick[] =>
  events.map((event) => ({ partition: 0, offset: String(offset), recordedAt: NOW, event }));
const batch = (source: string, ...messages: DeliveredClick[][]): ClickBatch => ({ source, partition: 0, messages: messages.flat() });
const batchOn = (source: string, partition: number, ...messages: DeliveredClick[][]): ClickBatch => ({
  source,
  partition,
  messages: messages.flat().map((m) => ({ ...m, partition })),
});

/**
 * The embedded store (chdb) with switches that fail a write like ClickHouse going away mid-batch:
 * before anything is written, or after the insert reached only some tables (a server killed in the
 * middle of an insert commits the parts of the tables it got to, and not the others).
 */
class FailableStore extends SqlClickAggregateStore {
  failNext = false;
  /** The next write reaches only these tables, then fails. */
  cutNextTo: readonly string[] | null = null;
  /** The next write waits for this before it is sent (a batch held in flight); `holding` says it got there. */
  holdNext: Promise<void> | null = null;
  holding = false;
  override async write(write: ClickWrite): Promise<void> {
    const hold = this.holdNext;
    if (hold) {
      this.holdNext = null;
      this.holding = true;
      await hold;
      this.holding = false;
    }
    if (this.failNext) {
      this.failNext = false;
      throw new Error('store down');
    }
    const reached = this.cutNextTo;
    if (reached) {
      this.cutNextTo = null;
      await super.write({ ...write, targets: (write.targets ?? this.targets).filter((t) => reached.includes(t)) });
      throw new Error('server killed mid-insert');
    }
    return super.write(write);
  }
}

describe('ClickConsumer on the embedded store', () => {
  let dir: string;
  let store: FailableStore;
  const consumer = () => new ClickConsumer(store, new UserAgentClassifier(), { allowedLatenessSeconds: 3600, now: () => NOW }, new Registry(), silent);
  const scope = (code: string, tenantId = 't1') => ({ tenantId, domain: 'sho.rt', code });
  const range = { from: NOW / 1000 - 7200, to: NOW / 1000 + 7200, granularity: 'hour' as const, bots: 'exclude' as const };
  /** The UTC day of NOW: the range a day bucket fits in. */
  const wholeDay = { ...range, from: Math.floor(NOW / 86_400_000) * 86_400, to: Math.floor(NOW / 86_400_000) * 86_400 + 86_400 };
  const clicksOf = async (code: string, bots: 'exclude' | 'only' = 'exclude') => (await store.series(scope(code), { ...range, bots })).totals.clicks;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'shortlink-consumer-'));
    store = new FailableStore(new ChdbExecutor(join(dir, 'chdb')), 'consumer_spec');
    await store.migrate();
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('aggregates clicks with bots apart and breakdowns, and counts a replayed record once (offset progress)', async () => {
    const code = 'agg0001';
    const b = batch(
      'kafka:t1',
      at(1, click({ code }), click({ code, country: null, refererHost: 'news.example' })),
      at(2, click({ code, userAgent: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' })),
    );
    await consumer().handle(b);
    // A new member (after a crash before the commit) gets the same records again.
    await consumer().handle(b);
    expect(await clicksOf(code)).toBe(2);
    expect(await clicksOf(code, 'only')).toBe(1);
    expect(await store.breakdown(scope(code), range, 'countries', 10)).toEqual([
      { value: '', clicks: 1, visitors: 1 },
      { value: 'DE', clicks: 1, visitors: 1 },
    ]);
    expect(await store.breakdown(scope(code), range, 'browsers', 10)).toEqual([{ value: 'Chrome', clicks: 2, visitors: 1 }]);
    expect(await store.breakdown(scope(code), { ...range, bots: 'only' }, 'devices', 10)).toEqual([{ value: 'bot', clicks: 1, visitors: 1 }]);
  });

  it("skips a producer's resend that landed at new offsets, and counts the new events riding along with it", async () => {
    const code = 'dup0001';
    const first = [click({ code, producer: 'resender' }), click({ code, producer: 'resender' })];
    const later = click({ code, producer: 'resender' });
    const c = consumer();
    await c.handle(batch('kafka:t2', at(10, ...first)));
    // The ack of offset 10 was lost: the producer sent the batch again, now with one more event.
    await c.handle(batch('kafka:t2', at(11, ...first, later)));
    expect(await clicksOf(code)).toBe(3);
    // A fresh consumer reads the marks from the store: a third copy is skipped too.
    await consumer().handle(batch('kafka:t2', at(12, ...first, later)));
    expect(await clicksOf(code)).toBe(3);
    expect(await store.producerMarks('kafka:t2', 0)).toEqual([{ source: 'kafka:t2', partition: 0, producer: 'resender', lastSeq: later.seq }]);
  });

  it('keeps nothing of a batch whose write failed: the redelivery counts it in full', async () => {
    const code = 'fail001';
    const c = consumer();
    const b = batch('kafka:t3', at(5, click({ code }), click({ code })));
    store.failNext = true;
    await expect(c.handle(b)).rejects.toThrow('store down');
    await c.handle(b);
    expect(await clicksOf(code)).toBe(2);
  });

  it('counts a batch once in every table, raw visits included, when a crash mid-insert reached only some tables (the ledgers)', async () => {
    const code = 'cut0001';
    const c = consumer();
    const b = batch('kafka:t6', at(3, click({ code }), click({ code, country: 'FR' })), at(4, click({ code, refererHost: 'news.example' })));
    store.cutNextTo = ['link_minute', 'dim_hour', 'visits'];
    await expect(c.handle(b)).rejects.toThrow('server killed mid-insert');
    // The same member gets the batch again; so does a new one after that, had the first died before its commit.
    await c.handle(b);
    await consumer().handle(b);
    for (const granularity of ['minute', 'hour', 'day'] as const) {
      expect([granularity, (await store.series(scope(code), { ...wholeDay, granularity })).totals.clicks]).toEqual([granularity, 3]);
      expect([granularity, await store.breakdown(scope(code), { ...wholeDay, granularity }, 'countries', 10)]).toEqual([
        granularity,
        [
          { value: 'DE', clicks: 2, visitors: 1 },
          { value: 'FR', clicks: 1, visitors: 1 },
        ],
      ]);
    }
    const visits = await store.visits({ tenantId: 't1', domain: 'sho.rt', code, from: 0, to: NOW / 1000 + 60, bots: 'include', after: null, limit: 10 });
    expect(visits.map((v) => v.country).sort()).toEqual(['DE', 'DE', 'FR']);
  });

  it('decides lateness and clock skew by the record time, not its own clock: a replay a day later counts the same', async () => {
    const code = 'rep0001';
    const b = batch('kafka:t7', at(0, click({ code, occurredAt: NOW - 3000_000 }), click({ code, occurredAt: NOW + 3600_000 })));
    store.cutNextTo = ['link_minute'];
    const tomorrow = new ClickConsumer(store, new UserAgentClassifier(), { allowedLatenessSeconds: 3600, now: () => NOW + 86_400_000 }, new Registry(), silent);
    await expect(consumer().handle(b)).rejects.toThrow('server killed mid-insert');
    await tomorrow.handle(b);
    const s = await store.series(scope(code), { ...range, granularity: 'minute' });
    expect(s.series.map((p) => [p.time, p.clicks])).toEqual([
      [Math.floor((NOW - 3000_000) / 60_000) * 60, 1],
      [Math.floor(NOW / 60_000) * 60, 1],
    ]);
    for (const granularity of ['hour', 'day'] as const) {
      expect([granularity, (await store.series(scope(code), { ...wholeDay, granularity })).totals.clicks]).toEqual([granularity, 2]);
    }
  });

  it('counts events of a new in-process log from offset 0, though an earlier one reached higher offsets', async () => {
    const code = 'mem0001';
    await consumer().handle(batch('memory:first', at(0, click({ code })), at(1, click({ code }))));
    await consumer().handle(batch('memory:second', at(0, click({ code, producer: 'p2' }))));
    expect(await clicksOf(code)).toBe(3);
  });

  it('puts late events in their own minute, drops those beyond the allowed lateness, counts those ahead of its clock now', async () => {
    const code = 'late001';
    const registry = new Registry();
    const c = new ClickConsumer(store, new UserAgentClassifier(), { allowedLatenessSeconds: 3600, now: () => NOW }, registry, silent);
    await c.handle(
      batch(
        'kafka:t4',
        at(0, click({ code, occurredAt: NOW - 3000_000 }), click({ code, occurredAt: NOW - 4000_000 }), click({ code, occurredAt: NOW + 3600_000 })),
      ),
    );
    const s = await store.series(scope(code), { ...range, from: NOW / 1000 - 7200, granularity: 'minute' });
    expect(s.series.map((p) => [p.time, p.clicks])).toEqual([
      [Math.floor((NOW - 3000_000) / 60_000) * 60, 1],
      [Math.floor(NOW / 60_000) * 60, 1],
    ]);
    expect(await registry.getSingleMetricAsString('shortlink_analytics_late_events_dropped_total')).toMatch(/ 1$/m);
  });

  it("keeps what it knows per partition: re-reading one partition's progress while another partition's batch is in flight loses none of that batch's producer marks", async () => {
    const code = 'par0001';
    const source = 'kafka:t8';
    const c = consumer();
    await c.handle(batchOn(source, 0, at(0, click({ code, producer: 'pa' }), click({ code, producer: 'pa' }))));
    const second = [click({ code, producer: 'pa' }), click({ code, producer: 'pa' })];
    let release = () => undefined as void;
    store.holdNext = new Promise<void>((resolve) => (release = resolve));
    // Partitions consumed at once: partition 0's next batch waits in its write...
    const inFlight = c.handle(batchOn(source, 0, at(1, ...second)));
    while (!store.holding) await new Promise((r) => setImmediate(r));
    // ...while partition 1, new to this member, has its progress and marks read from the store.
    await c.handle(batchOn(source, 1, at(40, click({ code: 'par0002', producer: 'pb' }))));
    release();
    await inFlight;
    // Partition 0's producer resends its last batch at a new offset (its ack was lost): counted once.
    await c.handle(batchOn(source, 0, at(2, ...second)));
    expect(await clicksOf(code)).toBe(4);
    expect(await clicksOf('par0002')).toBe(1);
  });

  it('re-reads progress when a batch does not continue where it left off (another member advanced the partition)', async () => {
    const code = 'reb0001';
    const a = consumer();
    await a.handle(batch('kafka:t5', at(1, click({ code }))));
    // Another member took the partition and wrote offsets 2..5.
    await consumer().handle(batch('kafka:t5', at(2, click({ code })), at(5, click({ code }))));
    await a.handle(batch('kafka:t5', at(4, click({ code, producer: 'x' })), at(5, click({ code, producer: 'x' })), at(6, click({ code }))));
    expect(await clicksOf(code)).toBe(4);
  });
});
