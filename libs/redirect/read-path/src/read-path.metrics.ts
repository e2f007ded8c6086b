import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { talliedCounter } from '@shortlink/nest-platform';
import { ClickQuotaObserver, ReservationOutcome } from './click-quota';
import { LookupSource, RedirectObserver } from './redirect-pipeline';

const SOURCES: LookupSource[] = ['l1', 'l1_negative', 'redis', 'redis_null', 'bloom_reject', 'db', 'db_miss', 'snapshot', 'rejected'];
const BREAKER = { closed: 0, half_open: 1, open: 2 } as const;

/** The read path's Prometheus series (their names are the redirect's: dashboards and alerts read them). */
export class ReadPathMetrics implements RedirectObserver, ClickQuotaObserver {
  private readonly countLookup: (source: LookupSource) => void;
  private readonly dbQueries: Counter;
  private readonly lockWaits: Histogram;
  private readonly redisBreaker: Gauge;
  private readonly maxClicks: Counter<'outcome'>;
  private readonly counterSeeds: Counter;
  private readonly clickCountFlushFailures: Counter;
  private unflushedSource: () => number = () => 0;
  private reservedSource: () => number = () => 0;
  private l1Source: () => { entries: number; pinned: number; bytes: number } = () => ({ entries: 0, pinned: 0, bytes: 0 });
  private bloomSource: () => { generations: number; capacity: number; bytes: number } = () => ({ generations: 0, capacity: 0, bytes: 0 });

  constructor(registry: Registry) {
    const registers = [registry];
    this.countLookup = talliedCounter('shortlink_redirect_lookup_total', 'Where a redirect lookup was answered', 'source', registers, SOURCES);
    this.dbQueries = new Counter({ name: 'shortlink_redirect_db_queries_total', help: 'Shard queries made by the redirect path', registers });
    this.lockWaits = new Histogram({
      name: 'shortlink_redirect_lock_wait_seconds',
      help: 'Time spent acquiring or waiting on the per-link rebuild lock',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.redisBreaker = new Gauge({ name: 'shortlink_redirect_breaker_state', help: 'Redis circuit breaker: 0 closed, 1 half-open, 2 open', registers });
    const maxClicksHelp = 'Clicks asked of links with maxClicks, by outcome (granted, exhausted, unavailable)';
    this.maxClicks = new Counter({ name: 'shortlink_redirect_max_clicks_total', help: maxClicksHelp, labelNames: ['outcome'], registers });
    const seedsHelp = "maxClicks counters started from the shard's count (first use, or lost by the cache)";
    this.counterSeeds = new Counter({ name: 'shortlink_redirect_click_counter_seeds_total', help: seedsHelp, registers });
    const flushHelp = 'Failed flushes of granted clicks to the shards (retried)';
    this.clickCountFlushFailures = new Counter({ name: 'shortlink_redirect_click_count_flush_failures_total', help: flushHelp, registers });
    const unflushed = () => this.unflushedSource();
    new Gauge({
      name: 'shortlink_redirect_unflushed_clicks',
      help: 'Clicks granted against maxClicks not yet on the shards: what a lost counter could cost now',
      registers,
      collect() {
        this.set(unflushed());
      },
    });
    const reserved = () => this.reservedSource();
    new Gauge({
      name: 'shortlink_redirect_reserved_clicks',
      help: 'Grants of maxClicks held here in leases, not yet given (a lost counter could give as many again, at most each lease cap)',
      registers,
      collect() {
        this.set(reserved());
      },
    });
    const l1 = () => this.l1Source();
    new Gauge({
      name: 'shortlink_redirect_l1_entries',
      help: 'Links and negative entries in L1, pinned hot keys included',
      registers,
      collect() {
        const size = l1();
        this.set(size.entries + size.pinned);
      },
    });
    new Gauge({
      name: 'shortlink_redirect_l1_bytes',
      help: 'Heap bytes L1 counts for its entries against REDIRECT_L1_MAX_BYTES (pinned keys not counted)',
      registers,
      collect() {
        this.set(l1().bytes);
      },
    });
    const bloom = () => this.bloomSource();
    new Gauge({
      name: 'shortlink_redirect_bloom_generations',
      help: 'Generations of the Bloom filter that lookups check (the layout this instance read)',
      registers,
      collect() {
        this.set(bloom().generations);
      },
    });
    new Gauge({
      name: 'shortlink_redirect_bloom_capacity_links',
      help: 'Links the checked generations of the Bloom filter are sized for, together',
      registers,
      collect() {
        this.set(bloom().capacity);
      },
    });
    new Gauge({
      name: 'shortlink_redirect_bloom_bytes',
      help: "Bytes the Bloom filter's bitmaps take in the shared cache, every generation of the layout",
      registers,
      collect() {
        this.set(bloom().bytes);
      },
    });
    this.redisBreaker.set(0);
  }

  /** Where the Bloom gauges are read from on each scrape. */
  readBloom(source: () => { generations: number; capacity: number; bytes: number }): void {
    this.bloomSource = source;
  }

  /** Where the L1 gauges are read from on each scrape. */
  readL1Size(source: () => { entries: number; pinned: number; bytes: number }): void {
    this.l1Source = source;
  }

  /** Where `shortlink_redirect_unflushed_clicks` is read from on each scrape. */
  readUnflushedClicks(source: () => number): void {
    this.unflushedSource = source;
  }

  /** Where `shortlink_redirect_reserved_clicks` is read from on each scrape. */
  readReservedClicks(source: () => number): void {
    this.reservedSource = source;
  }

  lookup(source: LookupSource): void {
    this.countLookup(source);
  }

  dbQuery(): void {
    this.dbQueries.inc();
  }

  lockWait(seconds: number): void {
    this.lockWaits.observe(seconds);
  }

  redisBreakerState(state: 'closed' | 'open' | 'half_open'): void {
    this.redisBreaker.set(BREAKER[state]);
  }

  reserved(outcome: ReservationOutcome, n: number): void {
    this.maxClicks.inc({ outcome }, n);
  }

  seeded(): void {
    this.counterSeeds.inc();
  }

  flushFailed(): void {
    this.clickCountFlushFailures.inc();
  }
}
