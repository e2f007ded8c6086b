import { DynamicModule, Inject, Injectable, Module, OnModuleInit, Optional } from '@nestjs/common';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
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
      new Gauge({ name: g.name, help: g.help, registers: [this.registry], collect() {
        this.set(g.value());
      } });
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
