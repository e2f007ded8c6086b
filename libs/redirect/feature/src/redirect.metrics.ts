import { Counter, Gauge, Registry } from 'prom-client';
import { TalliedHistogram, talliedCounter } from '@shortlink/nest-platform';
import { LinkChangeObserver } from './link-changes';

/** The redirect handler's Prometheus series (the read path has its own: ReadPathMetrics). */
export class RedirectMetrics implements LinkChangeObserver {
  private readonly countStatus: (status: number) => void;
  readonly duration: TalliedHistogram;
  readonly clicksDropped: Counter;
  private clickBufferSizeSource: () => number = () => 0;
  private rateLimiterSource: () => { keys: number; bytes: number } = () => ({ keys: 0, bytes: 0 });
  readonly clickSendFailures: Counter;
  readonly rateLimited: Counter<'scope'>;
  private readonly changesApplied: Counter;
  private readonly changeGaps: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.countStatus = talliedCounter('shortlink_redirect_requests_total', 'Redirect requests by HTTP status', 'status', registers);
    this.duration = new TalliedHistogram(
      'shortlink_redirect_duration_seconds',
      'Redirect handling time',
      [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    );
    this.clicksDropped = new Counter({ name: 'shortlink_click_events_dropped_total', help: 'Click events dropped because the buffer was full', registers });
    // Read at scrape time, not set on every push: a gauge update per click was measurable on the hot path.
    const bufferSize = () => this.clickBufferSizeSource();
    new Gauge({
      name: 'shortlink_click_buffer_size',
      help: 'Click events waiting to be sent to the bus',
      registers,
      collect() {
        this.set(bufferSize());
      },
    });
    const limiter = () => this.rateLimiterSource();
    new Gauge({
      name: 'shortlink_redirect_rate_limiter_keys',
      help: 'Client addresses the per-IP limiter tracks',
      registers,
      collect() {
        this.set(limiter().keys);
      },
    });
    new Gauge({
      name: 'shortlink_redirect_rate_limiter_bytes',
      help: 'Memory charged to the per-IP limiter (bounded)',
      registers,
      collect() {
        this.set(limiter().bytes);
      },
    });
    this.clickSendFailures = new Counter({ name: 'shortlink_click_send_failures_total', help: 'Failed batch sends to the bus (retried)', registers });
    this.rateLimited = new Counter({
      name: 'shortlink_redirect_rate_limited_total',
      help: 'Redirects refused by a rate limit',
      labelNames: ['scope'],
      registers,
    });
    this.changesApplied = new Counter({
      name: 'shortlink_redirect_link_changes_applied_total',
      help: 'Link changes heard on the channel and applied to L1',
      registers,
    });
    this.changeGaps = new Counter({
      name: 'shortlink_redirect_link_change_gaps_total',
      help: 'Interruptions of the change channel (L1 emptied of links each time)',
      registers,
    });
  }

  applied(): void {
    this.changesApplied.inc();
  }

  gap(): void {
    this.changeGaps.inc();
  }

  /** Where `shortlink_click_buffer_size` is read from on each scrape. */
  readClickBufferSize(source: () => number): void {
    this.clickBufferSizeSource = source;
  }

  /** Where the per-IP limiter gauges are read from on each scrape. */
  readRateLimiter(source: () => { keys: number; bytes: number }): void {
    this.rateLimiterSource = source;
  }

  status(code: number): void {
    this.countStatus(code);
  }
}
