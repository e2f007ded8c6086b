import { DynamicModule, Inject, Injectable, Module, OnModuleInit, Optional } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { PortGauge } from '@shortlink/core';
import { AdminRoutes } from './admin';

export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');
/** `() => readonly PortGauge[]`: the gauges of the ports an app opened (bound by the wiring). */
export const PORT_GAUGES = Symbol('PORT_GAUGES');

/** Publishes the app's registry at /metrics on its admin listener (never on the public port). */
@Injectable()
class MetricsRoute implements OnModuleInit {
  constructor(
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    @Inject(AdminRoutes) private readonly routes: AdminRoutes,
    @Optional() @Inject(PORT_GAUGES) private readonly gauges?: () => readonly PortGauge[],
  ) {}

  onModuleInit(): void {
    this.routes.add('/metrics', async () => ({ contentType: this.registry.contentType, body: await this.registry.metrics() }));
    for (const g of this.gauges?.() ?? []) {
      new Gauge({
        name: g.name,
        help: g.help,
        registers: [this.registry],
        collect() {
          this.set(g.value());
        },
      });
    }
  }
}

/** A registry per app (labelled with the app name), so three apps in one process do not collide. */
@Module({})
export class MetricsModule {
  static forApp(app: string): DynamicModule {
    const registry = new Registry();
    registry.setDefaultLabels({ app });
    collectDefaultMetrics({ register: registry, prefix: 'shortlink_process_' });
    return { module: MetricsModule, global: true, providers: [{ provide: METRICS_REGISTRY, useValue: registry }, MetricsRoute], exports: [METRICS_REGISTRY] };
  }
}

/**
 * A counter with one label whose increments are tallied in plain numbers and handed to prom-client
 * when it collects (on every scrape), so a scrape still sees every count. prom-client's own inc()
 * validates and hashes the labels on each call: ~1.5 % of an L1 hit in a CPU profile, and the
 * tallies moved the side-by-side bench from 0.64 to 0.69x the bare server (docs/benchmarks.md).
 */
export function talliedCounter<V extends string | number>(
  name: string,
  help: string,
  label: string,
  registers: Registry[],
  known: readonly V[] = [],
): (value: V) => void {
  const tallies = new Map<V, { pending: number }>();
  const counter: Counter<string> = new Counter({
    name,
    help,
    labelNames: [label],
    registers,
    collect() {
      for (const [value, tally] of tallies) {
        if (tally.pending === 0) continue;
        counter.inc({ [label]: String(value) }, tally.pending);
        tally.pending = 0;
      }
    },
  });
  // Known values are exported at 0 from the start, so rate() has a series before the first event.
  for (const value of known) counter.inc({ [label]: String(value) }, 0);
  return (value) => {
    let tally = tallies.get(value);
    if (!tally) tallies.set(value, (tally = { pending: 0 }));
    tally.pending++;
  };
}

/**
 * A histogram without labels whose observations are tallied in plain arrays: `observe` finds the
 * bucket and adds, nothing more; the registry reads the tallies when it scrapes. prom-client's own
 * observe() converts, validates and hashes the (empty) labels on each call, 1.7 % of an L1 hit's CPU
 * profile (docs/benchmarks.md). Exported in the text format of prom-client's Histogram: cumulative
 * `_bucket{le}` series with `+Inf`, `_sum`, `_count`.
 */
export class TalliedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly bounds: Float64Array;
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    buckets: readonly number[],
    registers: readonly Registry[],
  ) {
    this.bounds = Float64Array.from([...buckets].sort((a, b) => a - b));
    this.counts = new Float64Array(buckets.length);
    for (const registry of registers) registry.registerMetric(this as never);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        this.counts[i]++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }

  /** What the registry reads on a scrape (prom-client's MetricObjectWithValues). */
  async get(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    aggregator: 'sum';
    values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }>;
  }> {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i];
      values.push({ labels: { le: this.bounds[i] }, value: cumulative, metricName: `${this.name}_bucket` });
    }
    values.push({ labels: { le: '+Inf' }, value: this.count, metricName: `${this.name}_bucket` });
    values.push({ labels: {}, value: this.sum, metricName: `${this.name}_sum` });
    values.push({ labels: {}, value: this.count, metricName: `${this.name}_count` });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}
