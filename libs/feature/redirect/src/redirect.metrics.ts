import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export class RedirectMetrics {
  readonly requests: Counter<'status'>;
  readonly lookups: Counter<'source'>;
  readonly dbQueries: Counter;
  readonly duration: Histogram;
  readonly clicksDropped: Counter;
  readonly clickBufferSize: Gauge;
  readonly clickSendFailures: Counter;

  constructor(registry: Registry) {
    this.requests = new Counter({ name: 'shortlink_redirect_requests_total', help: 'Redirect requests by HTTP status', labelNames: ['status'], registers: [registry] });
    this.lookups = new Counter({ name: 'shortlink_redirect_lookup_total', help: 'Where a redirect lookup was answered', labelNames: ['source'], registers: [registry] });
    this.dbQueries = new Counter({ name: 'shortlink_redirect_db_queries_total', help: 'Shard queries made by the redirect path', registers: [registry] });
    this.duration = new Histogram({ name: 'shortlink_redirect_duration_seconds', help: 'Redirect handling time', buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers: [registry] });
    this.clicksDropped = new Counter({ name: 'shortlink_click_events_dropped_total', help: 'Click events dropped because the buffer was full', registers: [registry] });
    this.clickBufferSize = new Gauge({ name: 'shortlink_click_buffer_size', help: 'Click events waiting to be sent to the bus', registers: [registry] });
    this.clickSendFailures = new Counter({ name: 'shortlink_click_send_failures_total', help: 'Failed batch sends to the bus (retried)', registers: [registry] });
  }
}
