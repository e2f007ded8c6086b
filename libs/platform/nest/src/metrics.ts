import { Controller, Get, Header, Inject, Module, DynamicModule } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';

export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

@Controller()
export class MetricsController {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}

/** A registry per app (labelled with the app name), so three apps in one process do not collide. */
@Module({})
export class MetricsModule {
  static forApp(app: string): DynamicModule {
    const registry = new Registry();
    registry.setDefaultLabels({ app });
    collectDefaultMetrics({ register: registry, prefix: 'shortlink_process_' });
    return { module: MetricsModule, global: true, controllers: [MetricsController], providers: [{ provide: METRICS_REGISTRY, useValue: registry }], exports: [METRICS_REGISTRY] };
  }
}
