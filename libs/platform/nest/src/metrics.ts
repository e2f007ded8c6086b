import { DynamicModule, Inject, Injectable, Module, OnModuleInit } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { AdminRoutes } from './admin';

export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

/** Publishes the app's registry at /metrics on its admin listener (never on the public port). */
@Injectable()
class MetricsRoute implements OnModuleInit {
  constructor(
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    @Inject(AdminRoutes) private readonly routes: AdminRoutes,
  ) {}

  onModuleInit(): void {
    this.routes.add('/metrics', async () => ({ contentType: this.registry.contentType, body: await this.registry.metrics() }));
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
